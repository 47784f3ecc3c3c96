package main

import (
	"flag"
	"fmt"
	"io"

	"reasonix/config"
)

// trustFlags is `reasonix trust [DIR]`: record a project directory whose
// own reasonix.toml and .mcp.json `run` obeys in full.
func trustFlags(*flag.FlagSet) action {
	return func(args []string, stdout, _ io.Writer) error {
		dir := "."
		if len(args) > 0 {
			dir = args[0]
		}
		home, err := reasonixHome()
		if err != nil {
			return &configError{err}
		}
		abs, err := config.Trust(home, dir)
		if err != nil {
			return &configError{err}
		}
		fmt.Fprintf(stdout, "trusted %s: reasonix run obeys its reasonix.toml and .mcp.json in full\n", abs)
		return nil
	}
}

// reasonixHome is the Reasonix home the configuration loads from.
func reasonixHome() (string, error) {
	home, err := config.HomeDir()
	if err == nil && home == "" {
		err = fmt.Errorf("no Reasonix home: set $REASONIX_HOME or $HOME")
	}
	return home, err
}
