package main

import (
	"fmt"
	"io"
	"os"

	"reasonix/config"
	"reasonix/runner/webhook"
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
	// The same check serve makes: secrets set, templates and filters parse.
	if _, err := webhook.Compile(cfg.Webhooks, os.LookupEnv); err != nil {
		return &configError{err}
	}
	for _, h := range cfg.Webhooks {
		fmt.Fprintf(stdout, "webhook %s: POST /hooks/%s (%s, posture %s)\n", h.Name, h.Name, h.Kind, h.Posture)
	}
	fmt.Fprintln(stdout, "configuration ok")
	return nil
}
