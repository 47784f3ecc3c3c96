package config

import (
	"fmt"
	"time"
)

// Plugin transports.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// Plugin is one [[plugins]] entry: an MCP server. Command, Args, Env values,
// URL and Headers values are ${VAR}-expanded at load, except
// ${REASONIX_WORKSPACE_ROOT} and ${CLAUDE_PROJECT_DIR}, which are left for
// the caller to expand per workspace (see Expand).
type Plugin struct {
	Name    string            `toml:"name"`    // required, unique
	Type    string            `toml:"type"`    // stdio (default) | http | sse
	Command string            `toml:"command"` // stdio: the executable; required
	Args    []string          `toml:"args"`    // stdio
	Env     map[string]string `toml:"env"`     // stdio: extra environment
	URL     string            `toml:"url"`     // http, sse: required, http(s)
	Headers map[string]string `toml:"headers"` // http, sse: sent on every request

	// StartupTimeoutSeconds and CallTimeoutSeconds override the [tools] MCP
	// caps for this server; 0 = the global cap.
	StartupTimeoutSeconds int `toml:"startup_timeout_seconds"`
	CallTimeoutSeconds    int `toml:"call_timeout_seconds"`
	// ToolTimeoutSeconds overrides the call cap per raw MCP tool name.
	ToolTimeoutSeconds map[string]int `toml:"tool_timeout_seconds"`
	// Concurrency: "" (decide from tool annotations) | parallel | serial.
	Concurrency string `toml:"concurrency"`

	// Source is the file that declared the entry (a TOML file or .mcp.json).
	Source string `toml:"-"`
}

// StartupTimeout is the effective startup cap given the global default.
func (p *Plugin) StartupTimeout(t Tools) time.Duration {
	if p.StartupTimeoutSeconds > 0 {
		return seconds(p.StartupTimeoutSeconds)
	}
	return t.MCPStartupTimeout()
}

// CallTimeout is the effective call cap for tool given the global default.
func (p *Plugin) CallTimeout(t Tools, tool string) time.Duration {
	if s := p.ToolTimeoutSeconds[tool]; s > 0 {
		return seconds(s)
	}
	if p.CallTimeoutSeconds > 0 {
		return seconds(p.CallTimeoutSeconds)
	}
	return t.MCPCallTimeout()
}

func (p *Plugin) applyDefaults() {
	if p.Type == "" {
		p.Type = TransportStdio
	}
}

func (p *Plugin) validate(label string, pr *problems) {
	src := p.Source
	if p.Name == "" {
		pr.add(src, label+".name", "is required")
	} else if !validEntryName(p.Name) {
		pr.add(src, label+".name", "%q must start with a letter or digit and contain only letters, digits, '.', '_' or '-'", p.Name)
	}
	switch p.Type {
	case TransportStdio:
		if p.Command == "" {
			pr.add(src, label+".command", "is required for a stdio server")
		}
		if p.URL != "" || len(p.Headers) > 0 {
			pr.add(src, label, "url and headers apply only to type \"http\" or \"sse\"")
		}
	case TransportHTTP, TransportSSE:
		if p.URL == "" {
			pr.add(src, label+".url", "is required for type %q", p.Type)
		}
		checkURL(pr, src, label+".url", p.URL)
		if p.Command != "" || len(p.Args) > 0 || len(p.Env) > 0 {
			pr.add(src, label, "command, args and env apply only to type \"stdio\"")
		}
	default:
		pr.add(src, label+".type", "%q is not one of stdio, http, sse", p.Type)
	}
	for k := range p.Env {
		if !validEnvName(k) {
			pr.add(src, label+".env", "%q is not a valid environment variable name", k)
		}
	}
	for k := range p.Headers {
		if !validHeaderName(k) {
			pr.add(src, label+".headers", "%q is not a valid HTTP header name", k)
		}
	}
	checkRange(pr, src, label+".startup_timeout_seconds", p.StartupTimeoutSeconds, 0, 3600)
	checkRange(pr, src, label+".call_timeout_seconds", p.CallTimeoutSeconds, 0, 86400)
	for _, tool := range sortedKeys(p.ToolTimeoutSeconds) {
		checkRange(pr, src, fmt.Sprintf("%s.tool_timeout_seconds.%q", label, tool), p.ToolTimeoutSeconds[tool], 1, 86400)
	}
	if p.Concurrency != "" {
		checkOneOf(pr, src, label+".concurrency", p.Concurrency, "parallel", "serial")
	}
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c < 0x80 && c > ' ' && c != 0x7f && !isSeparator(c):
		default:
			return false
		}
	}
	return true
}

func isSeparator(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '@', ',', ';', ':', '\\', '"', '/', '[', ']', '?', '=', '{', '}':
		return true
	}
	return false
}
