package recipe

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// ScopePath is a skill found under a root [skills] paths names. It ranks
// between the user's own skills and the repository's.
const ScopePath Scope = "path"

// Bounds of a skill set: every enabled skill costs a line of every
// request's prompt, so both the count and each line are bounded.
const (
	// MaxSkills is the most skills one set holds; the rest (by name) are
	// left out with a Warning.
	MaxSkills = 128
	// maxIndexDescription bounds one skill's description in the index.
	maxIndexDescription = 160
)

// Skills is a loaded set of skills (SKILL.md files and single-file
// skills), read-only after LoadSkills and safe for concurrent use. Nil is
// an empty set.
type Skills struct {
	byName   map[string]*Skill
	Warnings []Warning
}

// SkillOptions says which skills a set leaves out.
type SkillOptions struct {
	// Disabled names skills hidden from the index, from slash invocation,
	// from the skill tools and from the profiles ([skills]
	// disabled_skills).
	Disabled []string
}

// LoadSkills reads the skills of the layers, a later layer overriding an
// earlier one by name (user, then paths, then project). In a layer, a
// skill is either a directory with a SKILL.md ("review/SKILL.md") or a
// Markdown file at the root ("review.md"); other files (a skill's
// references/ or scripts/) are no skills of their own. A malformed file is
// a Warning and never stops the others.
func LoadSkills(opts SkillOptions, layers ...Layer) *Skills {
	ss := &Skills{byName: map[string]*Skill{}}
	for _, l := range layers {
		for _, f := range l.Files {
			name, ok := skillFileName(f.Path)
			if !ok {
				continue
			}
			sk, problem := parseSkill(l.Scope, name, f)
			if problem != "" {
				ss.Warnings = append(ss.Warnings, Warning{Scope: l.Scope, Path: f.Path, Problem: problem})
				continue
			}
			sk.Path = f.Path
			ss.byName[sk.Name] = &sk
		}
	}
	for _, n := range opts.Disabled {
		delete(ss.byName, n)
	}
	if len(ss.byName) > MaxSkills {
		names := ss.Names()
		for _, n := range names[MaxSkills:] {
			sk := ss.byName[n]
			ss.Warnings = append(ss.Warnings, Warning{Scope: sk.Scope, Path: sk.Path, Problem: "more than 128 skills: the rest by name are left out"})
			delete(ss.byName, n)
		}
	}
	return ss
}

// skillFileName is the skill a file of a skills root defines, if any.
func skillFileName(path string) (string, bool) {
	if name, ok := strings.CutSuffix(path, "/SKILL.md"); ok && !strings.Contains(name, "/") {
		return name, true
	}
	if name, ok := strings.CutSuffix(path, ".md"); ok && !strings.Contains(name, "/") {
		return name, true
	}
	return "", false
}

// Lookup finds an enabled skill by name.
func (ss *Skills) Lookup(name string) (*Skill, bool) {
	if ss == nil {
		return nil, false
	}
	sk, ok := ss.byName[name]
	return sk, ok
}

// Names is every skill's name, sorted.
func (ss *Skills) Names() []string {
	if ss == nil {
		return nil
	}
	out := make([]string, 0, len(ss.byName))
	for n := range ss.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// List is every enabled skill, sorted by name.
func (ss *Skills) List() []*Skill {
	names := ss.Names()
	out := make([]*Skill, len(names))
	for i, n := range names {
		out[i] = ss.byName[n]
	}
	return out
}

// Len is how many skills the set holds.
func (ss *Skills) Len() int {
	if ss == nil {
		return 0
	}
	return len(ss.byName)
}

// Profiles is the set's runAs: subagent skills as sub-agent profiles.
func (ss *Skills) Profiles() *Profiles {
	ps := &Profiles{byName: map[string]Profile{}}
	if ss == nil {
		return ps
	}
	for n, sk := range ss.byName {
		if p, ok := ProfileFromSkill(*sk); ok {
			ps.byName[n] = p
		}
	}
	return ps
}

// Commands adds every skill to cs as a slash command of its name, so
// "/review pkg" runs a skill wherever a custom command can be named; a
// command file of the same name wins.
func (ss *Skills) Commands(cs *Commands) {
	for _, n := range ss.Names() {
		cs.Add(ss.byName[n].Command())
	}
}

// Index is the skill list of the system prompt: one line per skill a model
// may pick (not those with invocation: manual), sorted by name, with the
// same bytes for the same set, so the provider's prompt cache keeps
// hitting. "" when no skill is listed.
func (ss *Skills) Index() string {
	var b strings.Builder
	for _, n := range ss.Names() {
		sk := ss.byName[n]
		if sk.Manual() {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n\n## Skills\n\nThe team keeps these skills: written instructions for recurring jobs. " +
				"When one fits the task, read it with read_skill and follow it, or call run_skill with its name and arguments. " +
				"An inline skill's text becomes your instructions; a sub-agent skill runs a separate worker that returns only its answer, " +
				"which costs several times the tokens: use one only when the job is large and separable.\n\n")
		}
		b.WriteString("- ")
		b.WriteString(n)
		if sk.Subagent() {
			b.WriteString(" (sub-agent)")
		}
		if d := oneLine(sk.Description(), maxIndexDescription); d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Description is the skill's front matter description.
func (s *Skill) Description() string { return s.Meta["description"] }

// Subagent reports whether the skill runs as a sub-agent (runAs: subagent).
func (s *Skill) Subagent() bool { return strings.EqualFold(s.Meta["runas"], "subagent") }

// Manual reports whether only a person may start the skill (invocation:
// manual, or disable-model-invocation: true): it is left out of the index
// and stays available as /<name>.
func (s *Skill) Manual() bool {
	return strings.EqualFold(strings.TrimSpace(s.Meta["invocation"]), "manual") ||
		strings.EqualFold(strings.TrimSpace(s.Meta["disable-model-invocation"]), "true")
}

// Render is an inline skill's instructions for args: the body with
// $ARGUMENTS, $1…$N and $$ filled in as a command's are. A body that names
// no argument gets them on a last line of its own, so none is lost.
func (s *Skill) Render(args []string) string {
	t := parseTemplate(s.Body)
	out := t.render(args)
	if len(args) > 0 && !t.usesArgs() {
		out += "\n\nArguments: " + strings.Join(args, " ")
	}
	return out
}

// Command is the skill as a slash command: an inline skill renders its
// instructions; a sub-agent skill asks the model to run it with run_skill
// on the arguments (only the model's tool call starts a worker).
func (s *Skill) Command() *Command {
	if s.Subagent() {
		c := NewCommand(s.Name, s.Description(), "[task]", s.Scope,
			"Run the sub-agent skill "+s.Name+" with run_skill (name \""+s.Name+"\") on this task, and report its answer:\n\n$ARGUMENTS")
		c.Path = s.Path
		return c
	}
	c := NewCommand(s.Name, s.Description(), s.Meta["argument-hint"], s.Scope, s.Body)
	c.Path, c.skill = s.Path, s
	return c
}

// oneLine is s on one line, cut to at most n bytes on a rune boundary.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
