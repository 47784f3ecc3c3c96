package main

import (
	"context"
	"errors"
	"fmt"

	"reasonix/config"
)

// checkWorkspaces checks that every [[workspaces]] entry is usable (see
// config.Workspace.CheckReachable), calling ok for each one that is. The
// error is a configError naming every workspace that is not: config check,
// doctor and serve all report a wrong repo before a task fails on it.
func checkWorkspaces(cfg *config.Config, ok func(config.Workspace)) error {
	var problems []error
	for _, ws := range cfg.Workspaces {
		if err := ws.CheckReachable(context.Background()); err != nil {
			problems = append(problems, fmt.Errorf("%v (%s)", err, ws.Source))
			continue
		}
		if ok != nil {
			ok(ws)
		}
	}
	if len(problems) > 0 {
		return &configError{errors.Join(problems...)}
	}
	return nil
}
