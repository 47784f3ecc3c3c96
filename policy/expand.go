package policy

import (
	"fmt"
	"strings"
)

// expandVars expands ${VAR}, ${VAR:-default}, $VAR and a leading ~ in a
// configured path. An unset variable without a default is an error: a
// forbid_read entry like ${HOME}/.ssh must not quietly become /.ssh.
func expandVars(s string, lookup func(string) (string, bool)) (string, error) {
	if s == "~" || strings.HasPrefix(s, "~/") {
		s = "${HOME}" + s[1:]
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			sb.WriteByte(s[i])
			continue
		}
		var name, def string
		hasDef := false
		if s[i+1] == '{' {
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("unclosed ${ in %q", s)
			}
			inner := s[i+2 : i+end]
			if j := strings.Index(inner, ":-"); j >= 0 {
				name, def, hasDef = inner[:j], inner[j+2:], true
			} else {
				name = inner
			}
			i += end
		} else {
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || j > i+1 && s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if j == i+1 {
				sb.WriteByte('$')
				continue
			}
			name = s[i+1 : j]
			i = j - 1
		}
		if name == "" {
			return "", fmt.Errorf("empty variable name in %q", s)
		}
		v, ok := lookup(name)
		switch {
		case ok && (v != "" || !hasDef):
			sb.WriteString(v)
		case hasDef:
			sb.WriteString(def)
		default:
			return "", fmt.Errorf("variable %s is not set", name)
		}
	}
	return sb.String(), nil
}
