package config

import (
	"fmt"
	"os"
	"strings"
)

// Expand replaces ${VAR} and ${VAR:-default} in s using lookup (nil means
// os.LookupEnv). As in the shell, the default is used when VAR is unset or
// empty. Only the braced form is recognised; a lone "$" or "$VAR" is kept
// literally. A default cannot contain "${" (no nesting). An unterminated
// "${", an invalid name or an unset variable without a default is an error;
// errors name the variable but never contain its value.
func Expand(s string, lookup func(string) (string, bool)) (string, error) {
	out, err := expand(s, lookup, nil)
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	return out, nil
}

// Variables that name a workspace path. Plugins are shared by every
// workspace, so these are left in place at load time and expanded per
// workspace when a server starts.
var workspaceVars = map[string]bool{
	"REASONIX_WORKSPACE_ROOT": true,
	"CLAUDE_PROJECT_DIR":      true,
}

func keepWorkspaceVars(name string) bool { return workspaceVars[name] }

// expand is Expand with a keep predicate: references to variables for which
// keep reports true are copied verbatim, default included.
func expand(s string, lookup func(string) (string, bool), keep func(string) bool) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var b strings.Builder
	offset := 0
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated \"${\" at byte %d", offset+i)
		}
		name, def, hasDef := strings.Cut(rest[:j], ":-")
		switch {
		case !validEnvName(name):
			return "", fmt.Errorf("invalid variable reference %q at byte %d (want ${NAME} or ${NAME:-default})",
				truncate(s[i:i+3+j], 40), offset+i)
		case strings.Contains(def, "${"):
			return "", fmt.Errorf("nested \"${\" in the default of ${%s} is not supported", name)
		case keep != nil && keep(name):
			b.WriteString(s[i : i+3+j])
		default:
			v, ok := lookup(name)
			switch {
			case ok && (v != "" || !hasDef):
				b.WriteString(v)
			case hasDef:
				b.WriteString(def)
			default:
				return "", fmt.Errorf("${%s}: %w (set it, or write ${%s:-} for an empty default)",
					name, ErrUnsetVariable, name)
			}
		}
		offset += i + 3 + j
		s = rest[j+1:]
	}
}

// validEnvName reports whether name is a portable environment variable
// name: a letter or underscore, then letters, digits or underscores.
func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// expander applies expand to configuration fields, collecting one problem
// per failing field.
type expander struct {
	lookup func(string) (string, bool)
	keep   func(string) bool
	p      *problems
}

func (e expander) str(dst *string, source, field string) {
	out, err := expand(*dst, e.lookup, e.keep)
	if err != nil {
		e.p.wrap(source, field, err)
		return
	}
	*dst = out
}

func (e expander) list(dst []string, source, field string) {
	for i := range dst {
		e.str(&dst[i], source, fmt.Sprintf("%s[%d]", field, i))
	}
}

func (e expander) table(m map[string]string, source, field string) {
	for _, k := range sortedKeys(m) {
		v := m[k]
		e.str(&v, source, fmt.Sprintf("%s.%s", field, k))
		m[k] = v
	}
}
