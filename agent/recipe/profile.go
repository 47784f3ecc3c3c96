package recipe

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Profile is a sub-agent profile: how a worker thinks and the most it may
// do. It describes a worker, never a run: per-call values (write_paths,
// max_turns, retries) belong to the task that uses it, so they have no
// field here. ProfileFromSkill is the only way to make one from a file.
type Profile struct {
	Name        string
	Description string
	// SystemPrompt is the child's whole system prompt.
	SystemPrompt string
	// AllowedTools is a ceiling on the child's tools; nil means no ceiling
	// beyond what the run would give any child.
	AllowedTools []string
	// ReadOnly keeps every writer away from the child, whatever the task
	// or the fleet item claims.
	ReadOnly bool
	// Model is the profile's preferred model; see ChildModel for how it
	// ranks against configuration and the call.
	Model string
	// Effort is the profile's preferred reasoning effort (front matter
	// `effort`); it ranks like Model.
	Effort string
	Scope  Scope
}

// Skill is a parsed SKILL.md: its front matter as written, and its body.
type Skill struct {
	Name  string // the directory's (or single file's) name
	Scope Scope
	Path  string // the file it came from, relative to its root
	Meta  map[string]string
	Body  string
}

// ProfileFromSkill narrows a skill to a Profile, the single point where
// front matter becomes capability. Only the ceiling keys (allowed-tools,
// read-only), model and effort pass; any other key, whatever it claims, stops
// here. ok is false when the skill is not a sub-agent (runAs: subagent).
// A read-only value other than true or false is read as true: an
// unreadable ceiling fails closed.
func ProfileFromSkill(s Skill) (Profile, bool) {
	if !strings.EqualFold(s.Meta["runas"], "subagent") {
		return Profile{}, false
	}
	p := Profile{Name: s.Name, Description: s.Meta["description"], SystemPrompt: s.Body, Model: s.Meta["model"],
		Effort: strings.TrimSpace(s.Meta["effort"]), Scope: s.Scope}
	if v, set := s.Meta["allowed-tools"]; set {
		p.AllowedTools = list(v)
		if p.AllowedTools == nil {
			p.AllowedTools = []string{} // "allowed-tools:" empty: no tools at all
		}
	}
	if v, set := s.Meta["read-only"]; set {
		p.ReadOnly = !strings.EqualFold(strings.TrimSpace(v), "false")
	}
	return p, true
}

// Allows reports whether the profile's ceiling lets the child have tool.
// A read-only profile's writers are the caller's to remove (it knows which
// tools write); Allows only applies allowed-tools.
func (p *Profile) Allows(tool string) bool {
	return p.AllowedTools == nil || slices.Contains(p.AllowedTools, tool)
}

// Profiles is a loaded set of profiles, read-only and safe for concurrent
// use. Nil is an empty set.
type Profiles struct {
	byName   map[string]Profile
	Warnings []Warning
}

// LoadProfiles reads the skills of the layers (see LoadSkills) and keeps
// the runAs: subagent ones; other skills are not profiles and are left out
// silently.
func LoadProfiles(layers ...Layer) *Profiles {
	ss := LoadSkills(SkillOptions{}, layers...)
	ps := ss.Profiles()
	ps.Warnings = ss.Warnings
	return ps
}

// Lookup finds a profile by name.
func (ps *Profiles) Lookup(name string) (Profile, bool) {
	if ps == nil {
		return Profile{}, false
	}
	p, ok := ps.byName[name]
	return p, ok
}

// Names is every profile name, sorted.
func (ps *Profiles) Names() []string {
	if ps == nil {
		return nil
	}
	out := make([]string, 0, len(ps.byName))
	for n := range ps.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func parseSkill(scope Scope, name string, f File) (Skill, string) {
	if f.Refused != "" {
		return Skill{}, f.Refused
	}
	if !validSegment(name) {
		return Skill{}, "a skill's directory or file name may use only letters, digits, '-' and '_'"
	}
	if len(f.Data) > MaxFileBytes {
		return Skill{}, "larger than 64 KiB"
	}
	if !utf8.Valid(f.Data) {
		return Skill{}, "not valid UTF-8"
	}
	fm, body, err := splitFrontMatter(string(f.Data))
	if err != nil {
		return Skill{}, err.Error()
	}
	if n, set := fm["name"]; set && n != name {
		return Skill{}, "its front matter name " + quoteShort(n) + " differs from its file's name " + quoteShort(name)
	}
	body = strings.TrimSpace(body)
	if body == "" {
		return Skill{}, "the skill has no text"
	}
	return Skill{Name: name, Scope: scope, Meta: fm, Body: body}, ""
}

// ChildModel picks a child's model by the seed's precedence: the
// configuration's per-profile entry (agent.subagent_models), the call's
// own model, the profile's front matter, the configured sub-agent default
// (agent.subagent_model), then the parent's model.
func ChildModel(perProfile, call, profile, subagentDefault, parent string) string {
	for _, m := range []string{perProfile, call, profile, subagentDefault} {
		if m = strings.TrimSpace(m); m != "" {
			return m
		}
	}
	return parent
}

// quoteShort quotes s for a Warning, cut so a hostile value cannot fill
// the log.
func quoteShort(s string) string { return strconv.Quote(oneLine(s, 64)) }
