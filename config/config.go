package config

import (
	"path/filepath"
	"slices"

	"reasonix/internal/posture"
)

// Config is the merged configuration. Load returns it validated; a caller
// that applies command-line flags sets the fields directly, records the flag
// with SetOrigin, and calls Validate again. A Config is not safe for
// concurrent mutation; treat it as read-only once it is shared.
type Config struct {
	// DefaultModel is the model reference used when none is given: a provider
	// name, a model name or "provider/model". Empty means the first
	// provider's default model.
	DefaultModel string `toml:"default_model"`

	Providers   []Provider  `toml:"providers"`
	Agent       Agent       `toml:"agent"`
	Tools       Tools       `toml:"tools"`
	Permissions Permissions `toml:"permissions"`
	Sandbox     Sandbox     `toml:"sandbox"`
	Plugins     []Plugin    `toml:"plugins"`
	Store       Store       `toml:"store"`
	Runner      Runner      `toml:"runner"`
	Serve       Serve       `toml:"serve"`
	Bot         Bot         `toml:"bot"`
	Workspaces  []Workspace `toml:"workspaces"`
	Schedules   []Schedule  `toml:"schedules"`
	Webhooks    []Webhook   `toml:"webhooks"`
	Skills      Skills      `toml:"skills"`

	home    string            // the Reasonix home directory; "" when unknown
	sources []string          // files read, lowest precedence first
	origins map[string]string // "agent.max_steps" -> file (or flag) that set it
	// warnings say what Load left out (keys of an untrusted project file).
	warnings []string
}

// Default returns the configuration used when no file exists: every default
// applied and no providers, so callers can tell the user what is missing.
func Default() *Config {
	return &Config{
		Agent: Agent{
			MaxSteps:               100,
			MaxSubagentConcurrency: 6,
			MaxSubagentDepth:       2,
			MaxParallelWriters:     3,
			CompactRatio:           DefaultCompactRatio,
		},
		Tools: Tools{
			BashTimeoutSeconds:       120,
			MCPStartupTimeoutSeconds: 30,
			MCPCallTimeoutSeconds:    300,
		},
		Permissions: Permissions{Mode: ModeAsk, Posture: posture.Ask},
		Sandbox:     Sandbox{Bash: BashAuto},
		Store:       Store{Driver: DriverSQLite},
		Runner: Runner{
			MaxConcurrentTasks: DefaultMaxConcurrentTasks,
			TaskTimeout:        DefaultTaskTimeout,
			ApprovalTTL:        TTL(DefaultApprovalTTL),
			StallAfter:         DefaultStallAfter,
			BudgetWarn:         DefaultBudgetWarn,
		},
		Serve: Serve{Addr: "127.0.0.1:8080", MaxStreamsPerToken: 64, IntakeInflightBytes: defaultIntakeInflightBytes,
			DrainTimeout: DefaultDrainTimeout, StaleAfter: DefaultStaleAfter},
		origins: map[string]string{},
	}
}

// Warnings lists what Load left out and why, one sentence each: keys of
// an untrusted project file that name a file, command, URL or variable.
// The caller shows them to the person running the command.
func (c *Config) Warnings() []string { return slices.Clone(c.warnings) }

// Sources lists the files that were read (user file, .mcp.json, project
// file), lowest precedence first. It is empty for a default configuration.
func (c *Config) Sources() []string { return slices.Clone(c.sources) }

// Origin names where the value of key came from: a file path, whatever a
// caller recorded with SetOrigin (e.g. "--model flag"), or "" for a default.
// Keys are dotted TOML paths such as "agent.max_steps"; entries of
// [[providers]], [[plugins]] and [[workspaces]] carry their own Source.
func (c *Config) Origin(key string) string { return c.origins[key] }

// SetOrigin records that the value of key now comes from source, so that
// Validate blames the flag rather than the file it overrode.
func (c *Config) SetOrigin(key, source string) {
	if c.origins == nil {
		c.origins = map[string]string{}
	}
	c.origins[key] = source
}

// DataDir is where Reasonix keeps its state: [store] path when set, else the
// Reasonix home ($REASONIX_HOME, else ~/.reasonix). It is "" only when no
// home directory could be determined and no path was configured.
func (c *Config) DataDir() string {
	if c.Store.Path != "" {
		return c.Store.Path
	}
	return c.home
}

// Home is the Reasonix home directory the configuration was loaded with
// ($REASONIX_HOME, else ~/.reasonix); "" when unknown.
func (c *Config) Home() string { return c.home }

// resolveFrom makes a relative path p relative to the directory of the file
// that set it. Paths set by flags or defaults are left to the caller.
func resolveFrom(p, origin string) string {
	if p == "" || filepath.IsAbs(p) || !filepath.IsAbs(origin) {
		return p
	}
	return filepath.Join(filepath.Dir(origin), p)
}
