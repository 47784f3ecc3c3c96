// Package envexpand is the one ${VAR} grammar of the configuration: the
// config loader expands fields with it, and the policy expands sandbox
// paths with it, so a value means the same thing wherever it is written.
//
// The grammar is the shell's braced form: ${NAME} and ${NAME:-default},
// where the default is used when NAME is unset or empty. NAME is a portable
// variable name (a letter or '_', then letters, digits or '_'). A default
// cannot contain "${" (no nesting). A "$" not followed by "{" is literal,
// unless Options.Bare asks for the shell's short form $NAME as well.
// An unterminated "${", an invalid name or an unset variable without a
// default is an error; errors name the variable but never hold its value.
package envexpand

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrUnset is wrapped by the error for a variable that is unset and has no
// default.
var ErrUnset = errors.New("variable is not set and has no default")

// Options adjust the grammar for one caller.
type Options struct {
	// Bare also expands $NAME (the longest run of name characters after
	// the "$"). Paths take it because people write $HOME/.ssh; fields that
	// may hold a literal "$" (commands, URLs) do not.
	Bare bool
	// Keep reports variables whose references are copied verbatim, default
	// included, to be expanded later by someone else (the workspace root of
	// an MCP server, known only when the server starts).
	Keep func(name string) bool
}

// Expand replaces variable references in s with lookup's values (nil means
// os.LookupEnv).
func Expand(s string, lookup func(string) (string, bool), o Options) (string, error) {
	if !strings.Contains(s, "$") || (!o.Bare && !strings.Contains(s, "${")) {
		return s, nil
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' {
			j := strings.IndexByte(s[i:], '$')
			if j < 0 {
				b.WriteString(s[i:])
				break
			}
			b.WriteString(s[i : i+j])
			i += j
			continue
		}
		ref, name, def, hasDef, err := reference(s, i, o.Bare)
		if err != nil {
			return "", err
		}
		switch {
		case ref == "":
			b.WriteByte('$')
			i++
			continue
		case o.Keep != nil && o.Keep(name):
			b.WriteString(ref)
		default:
			v, ok := lookup(name)
			switch {
			case ok && (v != "" || !hasDef):
				b.WriteString(v)
			case hasDef:
				b.WriteString(def)
			default:
				return "", fmt.Errorf("${%s}: %w (set it, or write ${%s:-} for an empty default)", name, ErrUnset, name)
			}
		}
		i += len(ref)
	}
	return b.String(), nil
}

// reference parses the variable reference starting at s[i] == '$'. It
// returns ref == "" when the "$" starts none and is literal.
func reference(s string, i int, bare bool) (ref, name, def string, hasDef bool, err error) {
	rest := s[i+1:]
	if strings.HasPrefix(rest, "{") {
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			return "", "", "", false, fmt.Errorf("unterminated \"${\" at byte %d", i)
		}
		ref = s[i : i+j+2]
		name, def, hasDef = strings.Cut(rest[1:j], ":-")
		switch {
		case !ValidName(name):
			return "", "", "", false, fmt.Errorf("invalid variable reference %q at byte %d (want ${NAME} or ${NAME:-default})",
				truncate(ref, 40), i)
		case strings.Contains(def, "${"):
			return "", "", "", false, fmt.Errorf("nested \"${\" in the default of ${%s} is not supported", name)
		}
		return ref, name, def, hasDef, nil
	}
	if !bare {
		return "", "", "", false, nil
	}
	n := 0
	for n < len(rest) && nameByte(rest[n], n == 0) {
		n++
	}
	if n == 0 {
		return "", "", "", false, nil
	}
	return s[i : i+1+n], rest[:n], "", false, nil
}

// ValidName reports whether name is a portable environment variable name:
// a letter or underscore, then letters, digits or underscores.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(name[i], i == 0) {
			return false
		}
	}
	return true
}

func nameByte(c byte, first bool) bool {
	return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || !first && c >= '0' && c <= '9'
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
