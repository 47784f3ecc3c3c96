package policy

import (
	"strings"

	"reasonix/internal/envexpand"
)

// expandVars expands ${VAR}, ${VAR:-default}, $VAR and a leading ~ in a
// configured path, in the configuration's one grammar (internal/envexpand)
// with the shell's short form $VAR added, since paths are where people
// write $HOME. An unset variable without a default is an error: a
// forbid_read entry like ${HOME}/.ssh must not quietly become /.ssh.
func expandVars(s string, lookup func(string) (string, bool)) (string, error) {
	if s == "~" || strings.HasPrefix(s, "~/") {
		s = "${HOME}" + s[1:]
	}
	return envexpand.Expand(s, lookup, envexpand.Options{Bare: true})
}
