package session

import (
	"os"
	"path/filepath"

	"reasonix/config"
	"reasonix/internal/secretenv"
	"reasonix/runner/store"
)

// homeSecrets are paths under the user's home directory that hold
// credentials; no tool reads or lists them, whatever the posture.
var homeSecrets = []string{
	".ssh", ".aws", ".config/gcloud", ".gnupg", ".netrc", ".docker/config.json", ".kube",
	".git-credentials", ".config/gh", ".npmrc", ".pypirc",
}

// systemSecrets are absolute paths no tool reads.
var systemSecrets = []string{"/etc/shadow", "/etc/gshadow"}

// forbidRead is what the session's tools may not read: the credentials
// above, Reasonix's own secrets and state (the API token, the database,
// the run transcripts, the user configuration), and [sandbox] forbid_read.
// The data directory itself is not hidden, since the service's worktrees
// live under it.
func forbidRead(set *config.Config) []string {
	var out []string
	if home, err := os.UserHomeDir(); err == nil && home != "" && home != "/" {
		for _, p := range homeSecrets {
			out = append(out, filepath.Join(home, p))
		}
	}
	out = append(out, systemSecrets...)
	if dir := set.DataDir(); dir != "" {
		for _, name := range []string{"api-token", store.SQLiteFile, store.SQLiteFile + "-wal", store.SQLiteFile + "-shm", "transcripts"} {
			out = append(out, filepath.Join(dir, name))
		}
	}
	if home := set.Home(); home != "" {
		out = append(out, filepath.Join(home, config.UserFile))
	}
	// The files secrets were read from (NAME_FILE, the systemd credentials).
	out = append(out, secretenv.Files()...)
	return append(out, set.Sandbox.ForbidRead...)
}
