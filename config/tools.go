package config

import (
	"strings"
	"time"
)

// Tools is the [tools] table.
type Tools struct {
	// Enabled lists the built-in tools to offer; empty = all built-ins.
	// Names are checked by the caller against the tool registry.
	Enabled []string `toml:"enabled"`
	// BashTimeoutSeconds caps one foreground shell command; default 120, 0 = no cap.
	BashTimeoutSeconds int `toml:"bash_timeout_seconds"`
	// MCPStartupTimeoutSeconds caps an MCP server's initialize + tools/list; default 30.
	MCPStartupTimeoutSeconds int `toml:"mcp_startup_timeout_seconds"`
	// MCPCallTimeoutSeconds caps one MCP tool call; default 300.
	MCPCallTimeoutSeconds int `toml:"mcp_call_timeout_seconds"`
	// ProtectChangedFiles makes the tools that change a file in place
	// refuse one the task has not read since it last changed (nil: on).
	ProtectChangedFiles *bool `toml:"protect_changed_files"`
	// Shell is [tools.shell]: what the environment of model-written shell
	// commands holds beyond the built-in allowlist.
	Shell Shell `toml:"shell"`
}

// Shell is the [tools.shell] table.
type Shell struct {
	// PassEnv names further process variables shell commands may see.
	// Variables holding the configuration's secrets are never passed.
	PassEnv []string `toml:"pass_env"`
	// Env sets variables for shell commands, as written.
	Env map[string]string `toml:"env"`
}

// ProtectsChangedFiles is ProtectChangedFiles with its default (on).
func (t *Tools) ProtectsChangedFiles() bool {
	return t.ProtectChangedFiles == nil || *t.ProtectChangedFiles
}

// BashTimeout is BashTimeoutSeconds as a duration; 0 = no cap.
func (t *Tools) BashTimeout() time.Duration { return seconds(t.BashTimeoutSeconds) }

// MCPStartupTimeout is MCPStartupTimeoutSeconds as a duration.
func (t *Tools) MCPStartupTimeout() time.Duration { return seconds(t.MCPStartupTimeoutSeconds) }

// MCPCallTimeout is MCPCallTimeoutSeconds as a duration.
func (t *Tools) MCPCallTimeout() time.Duration { return seconds(t.MCPCallTimeoutSeconds) }

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

func (t *Tools) validate(c *Config, p *problems) {
	src := c.origins["tools.enabled"]
	checkStrings(p, src, "tools.enabled", t.Enabled)
	seen := map[string]bool{}
	for _, name := range t.Enabled {
		if seen[name] {
			p.add(src, "tools.enabled", "%q is listed twice", name)
		}
		seen[name] = true
	}
	checkStrings(p, c.origins["tools.shell.pass_env"], "tools.shell.pass_env", t.Shell.PassEnv)
	for _, name := range sortedKeys(t.Shell.Env) {
		if name == "" || strings.ContainsAny(name, "= \t\n") {
			p.add(c.origins["tools.shell.env"], "tools.shell.env", "%q is not a variable name", name)
		}
	}
	checkRange(p, c.origins["tools.bash_timeout_seconds"], "tools.bash_timeout_seconds", t.BashTimeoutSeconds, 0, 86400)
	checkRange(p, c.origins["tools.mcp_startup_timeout_seconds"], "tools.mcp_startup_timeout_seconds", t.MCPStartupTimeoutSeconds, 1, 3600)
	checkRange(p, c.origins["tools.mcp_call_timeout_seconds"], "tools.mcp_call_timeout_seconds", t.MCPCallTimeoutSeconds, 1, 86400)
}
