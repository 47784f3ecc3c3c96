package config

import (
	"fmt"
	"path/filepath"
)

// Bash sandbox modes.
const (
	BashEnforce = "enforce" // jail every shell command (refuse when no OS sandbox exists)
	BashOff     = "off"     // run shell commands unconfined
)

// Sandbox is the [sandbox] table: enforcement beneath the permission policy.
// Paths support ${VAR} expansion at load.
type Sandbox struct {
	// WorkspaceRoot confines file writers; "" = the run's workspace. A
	// relative path is resolved against the config file that set it.
	WorkspaceRoot string `toml:"workspace_root"`
	// AllowWrite adds absolute directories writers may modify.
	AllowWrite []string `toml:"allow_write"`
	// AllowRead adds absolute directories file tools may read under the ask
	// posture without a person (the workspace and allow_write always).
	AllowRead []string `toml:"allow_read"`
	// ForbidRead lists absolute files or directories no tool may read.
	ForbidRead []string `toml:"forbid_read"`
	Bash       string   `toml:"bash"`    // enforce | off (default)
	Network    bool     `toml:"network"` // sandboxed bash may reach the network
}

func (s *Sandbox) validate(c *Config, p *problems) {
	checkOneOf(p, c.origins["sandbox.bash"], "sandbox.bash", s.Bash, BashEnforce, BashOff)
	for _, f := range []struct {
		key   string
		paths []string
	}{{"sandbox.allow_write", s.AllowWrite}, {"sandbox.allow_read", s.AllowRead}, {"sandbox.forbid_read", s.ForbidRead}} {
		for i, path := range f.paths {
			if !filepath.IsAbs(path) {
				p.add(c.origins[f.key], fmt.Sprintf("%s[%d]", f.key, i),
					"%q must be absolute (use ${HOME}/... for a home-relative path)", path)
			}
		}
	}
}
