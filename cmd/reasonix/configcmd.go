package main

import (
	"fmt"
	"io"

	"reasonix/config"
)

// configCheck is `reasonix config check`.
func configCheck(file string, stdout, _ io.Writer) error {
	cfg, err := loadConfig(file, false)
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
	if err := checkWorkspaces(cfg, func(ws config.Workspace) {
		fmt.Fprintf(stdout, "workspace %s: %s (%s)\n", ws.Name, ws.Repo, ws.Base)
	}); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "configuration ok")
	return nil
}
