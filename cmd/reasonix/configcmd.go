package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// configCommand is `reasonix config check`.
func configCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		return usageErrorf("usage: reasonix config check [--config FILE]")
	}
	file, err := configFlag("config check", args[1:], stderr)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(file)
	if err != nil {
		return err
	}
	for _, src := range cfg.Sources() {
		fmt.Fprintf(stdout, "read %s\n", src)
	}
	if _, ref, err := buildProvider(cfg, ""); err != nil {
		return err
	} else {
		fmt.Fprintf(stdout, "model %s/%s\n", ref.Name, ref.Model)
	}
	if _, err := buildPolicy(cfg); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "configuration ok")
	return nil
}

// configFlag parses a command whose only flag is --config.
func configFlag(name string, args []string, stderr io.Writer) (string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "configuration `file` (replaces ./reasonix.toml)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", errHelpShown
		}
		return "", usageErrorf("%v", err)
	}
	if fs.NArg() > 0 {
		return "", usageErrorf("%s takes no arguments, got %q", name, fs.Arg(0))
	}
	return *file, nil
}
