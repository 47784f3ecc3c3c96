package session

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"reasonix/config"
)

// toolCaches are the build tools' cache variables and the directory each
// gets under the shared cache. Inside the OS sandbox the user's own caches
// (~/.cache/go-build, ~/.npm, …) are read-only, so without these `go test`
// or `npm ci` in a task would fail; a cache of Reasonix's own keeps builds
// fast across tasks without letting a task poison the user's.
var toolCaches = [][2]string{
	{"GOCACHE", "go-build"},
	{"GOMODCACHE", "go-mod"},
	{"npm_config_cache", "npm"},
	{"PIP_CACHE_DIR", "pip"},
	{"YARN_CACHE_FOLDER", "yarn"},
	{"XDG_CACHE_HOME", "xdg"},
}

// cacheDir is the writable cache of one principal's tasks under the
// data dir; "" when there is no data dir. scope "" is `reasonix run`'s.
//
// Why one per principal rather than one for the service: a build cache
// is trusted on read (go trusts $GOMODCACHE's extracted sources, npm its
// tarballs), so a task that plants a module there — say one a webhook
// started from an issue anyone could open — would otherwise reach the
// next task of every other principal. Each principal writes only its
// own; another's stays read-only like the rest of the disk. The cost is
// one cold cache per principal and the disk each one takes (docs/SPEC.md
// §7.1 quotes the measurement).
func cacheDir(set *config.Config, scope string) string {
	dir := set.DataDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "cache", cacheName(scope))
}

// cacheName is a directory name for scope: principal ids hold ':' and
// '/', and a name derived by hashing cannot be steered into a path.
func cacheName(scope string) string {
	if scope == "" {
		return "local"
	}
	sum := sha256.Sum256([]byte(scope))
	return "p-" + hex.EncodeToString(sum[:8])
}

// withToolCaches points the build tools' caches into dir, unless
// [tools.shell.env] sets the variable itself.
func withToolCaches(env []string, set *config.Config, dir string) []string {
	out := make([]string, 0, len(env)+len(toolCaches))
	override := map[string]bool{}
	for _, c := range toolCaches {
		if _, own := set.Tools.Shell.Env[c[0]]; !own {
			override[c[0]] = true
		}
	}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !override[name] {
			out = append(out, kv)
		}
	}
	for _, c := range toolCaches {
		if override[c[0]] {
			out = append(out, c[0]+"="+filepath.Join(dir, c[1]))
		}
	}
	return out
}

// prepareCache creates dir (private to its owner) for the sandbox to bind.
func prepareCache(dir string) error { return os.MkdirAll(dir, 0o700) }
