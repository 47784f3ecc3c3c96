package config

import (
	"fmt"
	"path/filepath"
)

// Bash sandbox modes.
const (
	// BashAuto (the default) runs shell commands in the OS sandbox whenever
	// the host offers one (Landlock, else bubblewrap) and unconfined
	// otherwise, where the permission analyser then narrows --auto.
	BashAuto = "auto"
	// BashRequire refuses shell commands when no OS sandbox works.
	BashRequire = "require"
	// BashEnforce is the older name of BashRequire, still accepted.
	BashEnforce = "enforce"
	// BashOff runs shell commands unconfined; only by explicit choice.
	BashOff = "off"
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
	// AllowSockets lists absolute paths of UNIX sockets outside the
	// writable roots that sandboxed bash may connect to (every other one
	// is refused: /var/run/docker.sock would give root on the host).
	AllowSockets []string `toml:"allow_sockets"`
	Bash         string   `toml:"bash"`    // auto (default) | require | enforce (= require) | off
	Network      bool     `toml:"network"` // sandboxed bash may reach the network
}

func (s *Sandbox) validate(c *Config, p *problems) {
	checkOneOf(p, c.origins["sandbox.bash"], "sandbox.bash", s.Bash, BashAuto, BashRequire, BashEnforce, BashOff)
	for _, f := range []struct {
		key   string
		paths []string
	}{{"sandbox.allow_write", s.AllowWrite}, {"sandbox.allow_read", s.AllowRead}, {"sandbox.forbid_read", s.ForbidRead}, {"sandbox.allow_sockets", s.AllowSockets}} {
		for i, path := range f.paths {
			if !filepath.IsAbs(path) {
				p.add(c.origins[f.key], fmt.Sprintf("%s[%d]", f.key, i),
					"%q must be absolute (use ${HOME}/... for a home-relative path)", path)
			}
		}
	}
}
