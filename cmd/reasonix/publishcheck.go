package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"reasonix/config"
	"reasonix/internal/secretenv"
	"reasonix/runner/forge"
)

// publishForges builds the forge client of every workspace that publishes,
// as a task's publish step will: the token variable must be set (serve
// exits 2 without it) and the forge settings must make a client. It makes
// no request; verifyPublish does.
func publishForges(cfg *config.Config) (map[string]forge.Forge, error) {
	var errs []error
	out := map[string]forge.Forge{}
	for _, ws := range cfg.Workspaces {
		p := ws.Publish
		if !p.Enabled() {
			continue
		}
		token := strings.TrimSpace(secretenv.Getenv(p.TokenEnv))
		if token == "" {
			errs = append(errs, fmt.Errorf("workspace %s: publish: $%s is not set; it must hold the %s token (%s)", ws.Name, p.TokenEnv, p.Forge, ws.Source))
			continue
		}
		f, err := forge.New(forge.Config{Kind: forge.Kind(p.Forge), APIURL: p.APIURL, Project: p.Project, Token: token})
		if err != nil {
			errs = append(errs, fmt.Errorf("workspace %s: publish: %w (%s)", ws.Name, err, ws.Source))
			continue
		}
		out[ws.Name] = f
	}
	return out, errors.Join(errs...)
}

// verifyPublish asks each publishing workspace's forge whether its token
// works, sees the project and may push, and says per workspace what is
// wrong or who the token is. `config check` and `doctor` run it; serve
// does not, so a forge that is down does not keep the service from
// starting.
func verifyPublish(ctx context.Context, cfg *config.Config, report func(ws string, id forge.Identity, err error)) {
	forges, _ := publishForges(cfg) // the rule already reported what failed here
	for _, ws := range cfg.Workspaces {
		f, ok := forges[ws.Name]
		if !ok {
			continue
		}
		vctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		id, err := f.Verify(vctx)
		cancel()
		if err != nil {
			err = fmt.Errorf("%s project %s with $%s: %w", ws.Publish.Forge, ws.Publish.Project, ws.Publish.TokenEnv, err)
		}
		report(ws.Name, id, err)
	}
}
