package config

import (
	"fmt"

	"reasonix/internal/envexpand"
)

// Expand replaces ${VAR} and ${VAR:-default} in s using lookup (nil means
// os.LookupEnv), in the grammar of internal/envexpand: as in the shell, the
// default is used when VAR is unset or empty; only the braced form is
// recognised (a lone "$" or "$VAR" is kept literally); a default cannot
// contain "${". An unterminated "${", an invalid name or an unset variable
// without a default is an error; errors name the variable but never
// contain its value.
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
	return envexpand.Expand(s, lookup, envexpand.Options{Keep: keep})
}

// validEnvName reports whether name is a portable environment variable
// name, the same rule ${NAME} references follow.
func validEnvName(name string) bool { return envexpand.ValidName(name) }

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
