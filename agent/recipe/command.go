package recipe

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Command is one custom command: a Markdown file whose body becomes a
// task's prompt. It has no other effect; in particular it grants nothing.
type Command struct {
	Name         string // "review", "git:commit", "mcp__docs__summarize"
	Description  string
	ArgumentHint string
	Scope        Scope
	Path         string // the file it came from, relative to its root
	Body         string
	tmpl         template
	// skill, when set, renders the command (Skill.Command).
	skill *Skill
}

// Render returns the command's prompt for args: $ARGUMENTS is the
// arguments joined by single spaces, $1…$N each one (empty when absent),
// $$ a literal $. Safe for concurrent use.
func (c *Command) Render(args []string) string {
	if c.skill != nil {
		return c.skill.Render(args)
	}
	return c.tmpl.render(args)
}

// NewCommand builds a command from text that did not come from a file, such
// as an MCP prompt's template.
func NewCommand(name, description, hint string, scope Scope, body string) *Command {
	return &Command{Name: name, Description: description, ArgumentHint: hint, Scope: scope, Body: body, tmpl: parseTemplate(body)}
}

// Commands is a loaded set of commands, read-only after LoadCommands and
// safe for concurrent use. The zero value and nil are empty sets.
type Commands struct {
	byName   map[string]*Command
	Warnings []Warning
}

// LoadCommands parses the layers in order; a command in a later layer
// replaces one of the same name from an earlier layer (pass the user layer
// before the project layer). Only .md files count; a malformed one is
// skipped with a Warning.
func LoadCommands(layers ...Layer) *Commands {
	cs := &Commands{byName: map[string]*Command{}}
	for _, l := range layers {
		for _, f := range l.Files {
			if !strings.HasSuffix(f.Path, ".md") {
				continue
			}
			c, problem := parseCommand(l.Scope, f)
			if problem != "" {
				cs.Warnings = append(cs.Warnings, Warning{Scope: l.Scope, Path: f.Path, Problem: problem})
				continue
			}
			cs.byName[c.Name] = c
		}
	}
	return cs
}

// Add puts c in the set unless a command of that name is already there
// (file commands win over MCP prompts of the same name).
func (cs *Commands) Add(c *Command) {
	if cs.byName == nil {
		cs.byName = map[string]*Command{}
	}
	if _, ok := cs.byName[c.Name]; !ok {
		cs.byName[c.Name] = c
	}
}

// Lookup finds a command by name (without the leading slash).
func (cs *Commands) Lookup(name string) (*Command, bool) {
	if cs == nil {
		return nil, false
	}
	c, ok := cs.byName[name]
	return c, ok
}

// List is every command, sorted by name.
func (cs *Commands) List() []*Command {
	if cs == nil {
		return nil
	}
	out := make([]*Command, 0, len(cs.byName))
	for _, c := range cs.byName {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *Command) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Names is every command name, sorted.
func (cs *Commands) Names() []string {
	list := cs.List()
	out := make([]string, len(list))
	for i, c := range list {
		out[i] = c.Name
	}
	return out
}

// parseCommand reads one file; problem is why it was skipped.
func parseCommand(scope Scope, f File) (*Command, string) {
	if f.Refused != "" {
		return nil, f.Refused
	}
	name, problem := commandName(f.Path)
	if problem != "" {
		return nil, problem
	}
	if len(f.Data) > MaxFileBytes {
		return nil, "larger than 64 KiB"
	}
	if !utf8.Valid(f.Data) {
		return nil, "not valid UTF-8"
	}
	fm, body, err := splitFrontMatter(string(f.Data))
	if err != nil {
		return nil, err.Error()
	}
	body = strings.TrimSpace(body)
	if body == "" {
		return nil, "the command has no text"
	}
	return &Command{
		Name: name, Description: fm["description"], ArgumentHint: fm["argument-hint"],
		Scope: scope, Path: f.Path, Body: body, tmpl: parseTemplate(body),
	}, ""
}

// commandName maps a path to a name: "review.md" → "review",
// "git/commit.md" → "git:commit". Each segment uses letters, digits, '-'
// and '_', so every name can be typed as a command word.
func commandName(path string) (string, string) {
	stem := strings.TrimSuffix(path, ".md")
	segs := strings.Split(stem, "/")
	for _, s := range segs {
		if !validSegment(s) {
			return "", "a command's file and directory names may use only letters, digits, '-' and '_'"
		}
	}
	return strings.Join(segs, ":"), ""
}

func validSegment(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !wordByte(s[i]) || s[i] == ':' {
			return false
		}
	}
	return true
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':'
}
