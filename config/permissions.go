package config

import "reasonix/internal/posture"

// Permission modes: the fallback for writer tools when no rule matches.
const (
	ModeAsk   = "ask"
	ModeAllow = "allow"
	ModeDeny  = "deny"
)

// Permissions is the [permissions] table. Rules are kept as written; the
// policy package parses them. Like every other key, each list replaces the
// same list from a lower layer; Config.Origin("permissions.deny") names the
// file a list came from.
type Permissions struct {
	Mode  string   `toml:"mode"`  // ask (default) | allow | deny
	Allow []string `toml:"allow"` // never prompted
	Ask   []string `toml:"ask"`   // always need a human
	Deny  []string `toml:"deny"`  // refused in every mode and posture
	// AllowDynamicBash lets a prefix grant cover shell commands with dynamic
	// parts; default false.
	AllowDynamicBash bool `toml:"allow_dynamic_bash"`
	// Posture is the default posture of tasks: ask (default), auto or yolo
	// (see the policy package). It is parsed as the file is decoded.
	Posture posture.Posture `toml:"posture"`
}

func (m *Permissions) validate(c *Config, p *problems) {
	checkOneOf(p, c.origins["permissions.mode"], "permissions.mode", m.Mode, ModeAsk, ModeAllow, ModeDeny)
	checkStrings(p, c.origins["permissions.allow"], "permissions.allow", m.Allow)
	checkStrings(p, c.origins["permissions.ask"], "permissions.ask", m.Ask)
	checkStrings(p, c.origins["permissions.deny"], "permissions.deny", m.Deny)
}
