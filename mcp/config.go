package mcp

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"reasonix/internal/envexpand"
)

// Transport kinds of ServerConfig.Type.
const (
	TypeStdio = "stdio" // a local subprocess; the default
	TypeHTTP  = "http"  // streamable HTTP
	TypeSSE   = "sse"   // the legacy 2024-11-05 HTTP+SSE transport
)

// Concurrency policies of ServerConfig.Concurrency.
const (
	Parallel = "parallel" // calls to the server may overlap
	Serial   = "serial"   // at most one call to the server at a time, across all runs
)

// Defaults used when neither the server nor the Manager sets a value.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultCallTimeout    = 300 * time.Second
	DefaultShutdownGrace  = 2 * time.Second
)

// ServerConfig declares one MCP server. The CLI maps a TOML [[plugins]] entry
// (or a .mcp.json server) onto it; ${VAR} expansion from the environment is
// the caller's job, ${REASONIX_WORKSPACE_ROOT} is the Manager's (see
// Config.WorkspaceRoot).
type ServerConfig struct {
	// Name identifies the server and prefixes its tools. Required and unique.
	Name string
	// Type is TypeStdio (also when empty), TypeHTTP or TypeSSE.
	Type string

	// Command, Args and Env start a stdio server. Env is added to the
	// environment of the Reasonix process.
	Command string
	Args    []string
	Env     map[string]string

	// URL and Headers reach an http or sse server. Headers are sent on every
	// request to URL's origin and never to another origin.
	URL     string
	Headers map[string]string

	// StartupTimeout caps connecting, initialize and tools/list; 0 uses
	// Config.StartupTimeout.
	StartupTimeout time.Duration
	// CallTimeout caps one tools/call; 0 uses Config.CallTimeout.
	CallTimeout time.Duration
	// ToolTimeouts overrides CallTimeout per raw (remote) tool name.
	ToolTimeouts map[string]time.Duration

	// Concurrency is Parallel, Serial, or empty for the default: Serial when
	// the name looks like a stateful browser server (see DefaultConcurrency),
	// Parallel otherwise.
	Concurrency string
}

// statefulHints are name fragments of servers known to keep per-process
// state (an open page, a selected tab) that concurrent calls would trample.
var statefulHints = []string{"browser", "playwright", "puppeteer", "chrome", "chromium", "selenium"}

// DefaultConcurrency is the policy of a server called name whose
// configuration does not choose one: Serial when the name contains browser,
// playwright, puppeteer, chrome, chromium or selenium (any case), else Parallel.
func DefaultConcurrency(name string) string {
	lower := strings.ToLower(name)
	for _, h := range statefulHints {
		if strings.Contains(lower, h) {
			return Serial
		}
	}
	return Parallel
}

// Config configures a Manager.
type Config struct {
	// Servers are the MCP servers to run. Names must be unique.
	Servers []ServerConfig
	// StartupTimeout and CallTimeout are the defaults for servers that set
	// none: DefaultStartupTimeout and DefaultCallTimeout when zero.
	StartupTimeout time.Duration
	CallTimeout    time.Duration
	// ShutdownGrace is how long a stdio server may take to exit after its
	// stdin is closed before it is signalled; DefaultShutdownGrace when zero.
	ShutdownGrace time.Duration
	// WorkspaceRoot, when set, is the absolute workspace path: stdio servers
	// start in it, it replaces ${REASONIX_WORKSPACE_ROOT} and
	// ${CLAUDE_PROJECT_DIR} in command, args, env, url and headers (so the
	// config loader must leave those two untouched), it is advertised as the
	// client's root, and stdio calls carry it as _meta["io.reasonix/cwd"].
	WorkspaceRoot string
	// Logger receives lifecycle messages and stdio servers' stderr; nil uses
	// slog.Default().
	Logger *slog.Logger
	// HTTPClient is the base client of http and sse servers; nil uses a
	// client built on http.DefaultTransport.
	HTTPClient *http.Client
}

// Validate reports what New would refuse in c, one error per server,
// without starting anything: `reasonix config check`, `doctor` and `serve`
// run it at start, so a plugin name or transport the manager would refuse
// at a task's first step is refused before any task runs.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults returns a copy of c with defaults applied and every server
// config normalised, or an error per invalid server.
func (c Config) withDefaults() (Config, error) {
	c.StartupTimeout = cmp.Or(c.StartupTimeout, DefaultStartupTimeout)
	c.CallTimeout = cmp.Or(c.CallTimeout, DefaultCallTimeout)
	c.ShutdownGrace = cmp.Or(c.ShutdownGrace, DefaultShutdownGrace)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	seen := map[string]bool{}
	servers := make([]ServerConfig, 0, len(c.Servers))
	var errs []error
	for i, s := range c.Servers {
		s, err := s.normalize(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp: servers[%d]: %w", i, err))
			continue
		}
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("mcp: servers[%d]: name %q used twice", i, s.Name))
			continue
		}
		seen[s.Name] = true
		servers = append(servers, s)
	}
	c.Servers = servers
	return c, errors.Join(errs...)
}

// normalize validates s and returns a copy with defaults and the workspace
// placeholders applied.
func (s ServerConfig) normalize(c Config) (ServerConfig, error) {
	if strings.TrimSpace(s.Name) == "" {
		return s, errors.New("name is empty")
	}
	if strings.Contains(s.Name, "__") {
		// The tool prefix mcp__<server>__<tool> must split unambiguously.
		return s, fmt.Errorf("name %q must not contain \"__\"", s.Name)
	}
	s.Type = cmp.Or(s.Type, TypeStdio)
	if s.Type == "streamable-http" {
		s.Type = TypeHTTP
	}
	s.Concurrency = cmp.Or(s.Concurrency, DefaultConcurrency(s.Name))
	if s.Concurrency != Parallel && s.Concurrency != Serial {
		return s, fmt.Errorf("server %q: concurrency %q must be %q or %q", s.Name, s.Concurrency, Parallel, Serial)
	}
	s.StartupTimeout = cmp.Or(s.StartupTimeout, c.StartupTimeout)
	s.CallTimeout = cmp.Or(s.CallTimeout, c.CallTimeout)
	if s.StartupTimeout < 0 || s.CallTimeout < 0 {
		return s, fmt.Errorf("server %q: timeouts must not be negative", s.Name)
	}
	for tool, d := range s.ToolTimeouts {
		if d <= 0 {
			return s, fmt.Errorf("server %q: tool timeout of %q must be positive", s.Name, tool)
		}
	}

	expand := func(v string) string { return expandWorkspace(v, c.WorkspaceRoot) }
	s.Command = expand(s.Command)
	s.Args = slices.Clone(s.Args)
	for i := range s.Args {
		s.Args[i] = expand(s.Args[i])
	}
	s.Env = expandMap(s.Env, expand)
	s.URL = expand(s.URL)
	s.Headers = expandMap(s.Headers, expand)
	s.ToolTimeouts = maps.Clone(s.ToolTimeouts)

	switch s.Type {
	case TypeStdio:
		if s.Command == "" {
			return s, fmt.Errorf("server %q: command is empty", s.Name)
		}
	case TypeHTTP, TypeSSE:
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// The URL may carry a token: never echo it.
			return s, fmt.Errorf("server %q: url must be an absolute http or https URL", s.Name)
		}
	default:
		return s, fmt.Errorf("server %q: type %q must be %q, %q or %q", s.Name, s.Type, TypeStdio, TypeHTTP, TypeSSE)
	}
	return s, nil
}

// workspacePlaceholders expand to the workspace root and outrank any
// environment variable of the same name.
var workspacePlaceholders = []string{"${REASONIX_WORKSPACE_ROOT}", "${CLAUDE_PROJECT_DIR}"}

// expandWorkspace replaces the workspace variables in v in the
// configuration's ${VAR} grammar (internal/envexpand), so that a default
// the loader kept, as in ${CLAUDE_PROJECT_DIR:-.}, is expanded too; other
// references are left as they are. A value outside the grammar (a server
// configured in code) has only the plain placeholders replaced.
func expandWorkspace(v, root string) string {
	if root == "" || !strings.Contains(v, "${") {
		return v
	}
	out, err := envexpand.Expand(v, func(string) (string, bool) { return root, true }, envexpand.Options{
		Keep: func(name string) bool { return name != "REASONIX_WORKSPACE_ROOT" && name != "CLAUDE_PROJECT_DIR" },
	})
	if err == nil {
		return out
	}
	for _, p := range workspacePlaceholders {
		v = strings.ReplaceAll(v, p, root)
	}
	return v
}

func expandMap(m map[string]string, expand func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = expand(v)
	}
	return out
}

// callTimeout is the timeout of one call to the raw tool name.
func (s *ServerConfig) callTimeout(tool string) time.Duration {
	if d, ok := s.ToolTimeouts[tool]; ok {
		return d
	}
	return s.CallTimeout
}
