package policy

import (
	"fmt"
	"path"
	"strings"
)

// Rule families. A family names a group of tools one rule covers.
const (
	familyBash = "Bash" // the bash tool; legacy spelling "bash"
	familyEdit = "Edit" // every built-in file mutation
	familyRead = "Read" // every built-in file reader
)

// editTools are the built-in file mutations: one Edit rule covers all of
// them, so a grant made for write_file also covers edit_file and move_file.
var editTools = map[string]bool{"write_file": true, "edit_file": true, "multi_edit": true, "move_file": true,
	"delete_range": true, "delete_symbol": true, "notebook_edit": true}

// readTools are the built-in tools that read files.
var readTools = map[string]bool{"read_file": true, "ls": true, "glob": true, "grep": true, "code_index": true, "view_image": true}

type ruleKind uint8

const (
	kindBare      ruleKind = iota // Tool: every call of the family
	kindExact                     // Bash=literal: only the identical command
	kindPrefix                    // Bash(go test:*): a simple command starting with these words
	kindRawPrefix                 // Bash(rm -rf*): the last word is a string prefix
	kindWords                     // Bash(npm run build): exactly these words
	kindGlob                      // Edit(docs/**), mcp__x__y(spec): the subject matches a glob
	kindDomain                    // WebFetch(domain:example.com): the URL's host is the domain or below it
)

// Rule is one parsed permission rule. The zero value matches nothing useful;
// build rules with ParseRule.
type Rule struct {
	family string
	kind   ruleKind
	spec   string   // literal (kindExact) or cleaned glob (kindGlob)
	words  []string // bash words (kindPrefix, kindRawPrefix, kindWords)
}

// bashSpecMeta are characters a Bash(...) specifier cannot contain: the
// subject is matched word by word against parsed commands, so shell syntax in
// a specifier could never match and would silently do nothing.
const bashSpecMeta = ";&|<>$`\\\"'(){}[]?\n"

// ParseRule parses one rule: `Tool`, `Tool(specifier)`, `Bash(prefix:*)`,
// legacy `Bash(prefix *)`, `Bash(prefix*)`, `Bash=exact literal`,
// `Edit(glob)` or `Read(glob)`. Legacy lowercase `bash` is the Bash family.
// The error quotes the rule and says what is wrong with it.
func ParseRule(s string) (Rule, error) {
	r, err := parseRule(s)
	if err != nil {
		return Rule{}, fmt.Errorf("policy: %w", err)
	}
	return r, nil
}

func parseRule(s string) (Rule, error) {
	raw := s
	s = strings.TrimSpace(s)
	bad := func(format string, args ...any) (Rule, error) {
		return Rule{}, fmt.Errorf("rule %q: %s", raw, fmt.Sprintf(format, args...))
	}
	if s == "" {
		return bad("empty rule")
	}
	i := strings.IndexAny(s, "(=")
	if i < 0 {
		if err := checkToolName(s); err != nil {
			return bad("%v", err)
		}
		return Rule{family: canonicalFamily(s), kind: kindBare}, nil
	}
	name := strings.TrimSpace(s[:i])
	if err := checkToolName(name); err != nil {
		return bad("%v", err)
	}
	family := canonicalFamily(name)
	if s[i] == '=' {
		if family != familyBash {
			return bad("the exact form Tool=literal exists only for Bash")
		}
		lit := strings.TrimSpace(s[i+1:])
		if lit == "" {
			return bad("Bash= needs the exact command after '='")
		}
		return Rule{family: familyBash, kind: kindExact, spec: lit}, nil
	}
	if !strings.HasSuffix(s, ")") {
		return bad("missing closing ')'")
	}
	spec := strings.TrimSpace(s[i+1 : len(s)-1])
	if spec == "" {
		return bad("empty specifier inside ()")
	}
	if family == familyBash {
		return parseBashSpec(spec, bad)
	}
	if family == familyWebFetch {
		return parseDomainSpec(spec, bad)
	}
	// Clean and trim until stable, so the printed rule parses back the same
	// ("a/ /" cleans to "a/ ", which trims to "a/", which cleans to "a").
	for {
		clean := strings.TrimSpace(path.Clean(spec))
		if clean == spec {
			break
		}
		spec = clean
	}
	for _, seg := range strings.Split(spec, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return bad("bad glob pattern: %v", err)
		}
	}
	return Rule{family: family, kind: kindGlob, spec: spec}, nil
}

func parseBashSpec(spec string, bad func(string, ...any) (Rule, error)) (Rule, error) {
	kind := kindWords
	switch {
	case strings.HasSuffix(spec, ":*"):
		kind, spec = kindPrefix, spec[:len(spec)-2]
	case strings.HasSuffix(spec, " *"):
		kind, spec = kindPrefix, spec[:len(spec)-2] // legacy form, saved as :*
	case strings.HasSuffix(spec, "*"):
		kind, spec = kindRawPrefix, spec[:len(spec)-1]
	}
	if strings.Contains(spec, "*") {
		return bad("a '*' wildcard is only supported at the end, as in Bash(go test:*)")
	}
	if j := strings.IndexAny(spec, bashSpecMeta); j >= 0 {
		return bad("shell syntax %q cannot match a parsed command; use Bash=<exact command> for an exact literal", spec[j:j+1])
	}
	words := strings.Fields(spec)
	if kind == kindRawPrefix && len(words) > 0 && strings.HasSuffix(words[len(words)-1], ":") {
		// "git:\t*" prints as "git:*": read it as the prefix rule it prints
		// as, so the rule parses back the same.
		last := strings.TrimSuffix(words[len(words)-1], ":")
		kind, words = kindPrefix, words[:len(words)-1]
		if last != "" {
			words = append(words, last)
		}
	}
	if len(words) == 0 {
		return bad("empty command prefix")
	}
	return Rule{family: familyBash, kind: kind, words: words}, nil
}

// checkToolName accepts the characters tool names use, MCP names
// (mcp__server__tool) included.
func checkToolName(name string) error {
	if name == "" {
		return fmt.Errorf("missing tool name")
	}
	for _, r := range name {
		ok := r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !ok {
			return fmt.Errorf("tool name %q contains %q", name, r)
		}
	}
	return nil
}

func canonicalFamily(name string) string {
	if name == "bash" {
		return familyBash
	}
	return name
}

// String prints the rule in its canonical form: legacy prefixes are printed
// as `Bash(prefix:*)` and lowercase `bash` as `Bash`. ParseRule(r.String())
// yields an equal rule.
func (r Rule) String() string {
	switch r.kind {
	case kindBare:
		return r.family
	case kindExact:
		return r.family + "=" + r.spec
	case kindPrefix:
		return r.family + "(" + strings.Join(r.words, " ") + ":*)"
	case kindRawPrefix:
		return r.family + "(" + strings.Join(r.words, " ") + "*)"
	case kindWords:
		return r.family + "(" + strings.Join(r.words, " ") + ")"
	case kindDomain:
		return r.family + "(domain:" + r.spec + ")"
	default:
		return r.family + "(" + r.spec + ")"
	}
}

// covers reports whether the rule's family includes tool.
func (r Rule) covers(tool string) bool {
	switch r.family {
	case familyBash:
		return tool == "bash"
	case familyEdit:
		return editTools[tool]
	case familyRead:
		return readTools[tool]
	case familyWebFetch:
		return tool == webFetchTool
	default:
		return r.family == tool
	}
}
