package config

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// seedKey says why a key of the Reasonix design's configuration sample
// (seed spec §5) is accepted without a field here: it only matters to an
// interactive front end (a terminal UI, a desktop window, a browser login),
// it is a legacy key the design retired, or it names a feature this
// service does not have. Such a key is never an error, so a configuration
// written for the interactive product loads unchanged; `config check` says
// in one line what became of it.
type seedKey struct{ why string }

const (
	whyInteractive = "interactive-only (terminal or desktop UI)"
	whyLegacy      = "a retired legacy key"
	whyNoFeature   = "this service has no such feature"
)

// seedKeys lists the accepted keys by dotted path; an entry names a whole
// table when it is a table ("ui"). Keys of arrays of tables carry no index
// ("providers.web_search").
var seedKeys = map[string]seedKey{
	"language":                 {whyInteractive},
	"ui.shortcut_layout":       {whyInteractive},
	"ui.cursor_shape":          {whyInteractive},
	"ui.show_turn_usage":       {whyInteractive},
	"agent.reasoning_language": {whyInteractive},
	"providers.models_url":     {"model discovery for interactive model switchers"},
	"serve.auth_mode":          {"the interactive product's browser login (this service uses [serve] api_token_env and dashboard sign-in)"},
	"serve.token":              {"the interactive product's browser login (the API token comes from [serve] api_token_env; never put a secret in the file)"},
	"serve.password_hash":      {"the interactive product's browser login"},
	"serve.behind_proxy":       {"the interactive product's browser frontend (set [serve] public_url)"},
	"tools.browser_tools":      {whyNoFeature},
	"tools.shell.prefer":       {"the shell tool is always bash here"},
	"tools.shell.path":         {"the shell tool is always bash from the sandbox's PATH here"},
	"providers.web_search":     {whyNoFeature},
	"environment.enabled":      {whyNoFeature},
	"environment.offline":      {whyNoFeature},
	"environment.tools":        {whyNoFeature}, // a table of tool name = path
	// Plan Mode's old bash allowlist: Plan bash uses [permissions] now.
	"agent.plan_mode_read_only_commands": {whyLegacy + " (write [permissions] rules instead)"},
	"agent.plan_mode_allowed_tools":      {whyLegacy + " (write [permissions] rules instead)"},
	"agent.planner_max_steps":            {whyLegacy},
	// The old multi-threshold compaction keys (seed §3.6): one compact_ratio now.
	"agent.soft_compact_ratio":     {whyLegacy + " (compaction uses agent.compact_ratio)"},
	"agent.tool_result_snip_ratio": {whyLegacy + " (compaction uses agent.compact_ratio)"},
	"agent.compact_force_ratio":    {whyLegacy + " (compaction uses agent.compact_ratio)"},
	"agent.cold_resume_prune":      {whyLegacy},
	"agent.context_editing":        {whyLegacy},
}

// seedTables are the tables only accepted keys live in: the table itself
// is no unknown key, but an unlisted key inside it still is.
var seedTables = map[string]bool{"ui": true, "environment": true}

// seedKeyFor finds the entry covering key (itself or a table above it).
func seedKeyFor(key string) (string, seedKey, bool) {
	for k := key; ; {
		if s, ok := seedKeys[k]; ok {
			return k, s, true
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			return "", seedKey{}, false
		}
		k = k[:i]
	}
}

// seedKeyWarnings returns one warning per accepted seed key the file set,
// in file order, and the set of keys (and seed-only tables) they cover.
func seedKeyWarnings(path string, md *toml.MetaData) (warnings []string, covered map[string]bool) {
	covered = map[string]bool{}
	for _, k := range md.Keys() {
		key := k.String()
		if seedTables[key] {
			covered[key] = true
			continue
		}
		top, s, ok := seedKeyFor(key)
		if !ok {
			continue
		}
		covered[key] = true
		if top == key {
			warnings = append(warnings, fmt.Sprintf("%s: %q ignored: %s", path, top, s.why))
		}
	}
	return warnings, covered
}
