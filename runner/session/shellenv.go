package session

import (
	"maps"
	"os"
	"slices"
	"strings"

	"reasonix/config"
)

// shellAllow are the process variables a model-written command may see:
// what a shell and the common toolchains need to behave, nothing that
// authenticates. Everything else (cloud keys, tokens, the configuration's
// secrets) stays out unless [tools.shell] pass_env names it.
var shellAllow = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
	"GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOPROXY",
	"GONOSUMDB", "GOSUMDB", "GOTOOLCHAIN", "CGO_ENABLED",
	"CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME", "PYENV_ROOT", "VIRTUAL_ENV", "NODE_PATH",
}

// ShellEnv is the environment of commands a model writes: the allowlisted
// process variables (and LC_*), those [tools.shell] pass_env names, and
// [tools.shell.env] — but never a variable the configuration names as a
// secret (provider keys, the store DSN, the API token), so a command
// cannot print them.
func ShellEnv(set *config.Config) []string {
	secret := secretVars(set)
	pass := append(slices.Clone(shellAllow), set.Tools.Shell.PassEnv...)
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if secret[name] || set.Tools.Shell.Env[name] != "" {
			continue
		}
		if slices.Contains(pass, name) || strings.HasPrefix(name, "LC_") {
			env = append(env, kv)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(set.Tools.Shell.Env)) {
		if !secret[name] {
			env = append(env, name+"="+set.Tools.Shell.Env[name])
		}
	}
	return env
}

// SetupEnv is the environment of the service's own workspace commands (git
// clone and fetch, the configured setup commands): the process environment,
// which may hold what a private clone needs (an SSH agent, git
// credentials), without the configuration's secrets.
func SetupEnv(set *config.Config) []string {
	secret := secretVars(set)
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !secret[name] {
			env = append(env, kv)
		}
	}
	return env
}

// secretVars names the variables the configuration reads secrets from.
func secretVars(set *config.Config) map[string]bool {
	secret := map[string]bool{"REASONIX_API_TOKEN": true}
	for _, name := range set.SecretEnvNames() {
		secret[name] = true
	}
	return secret
}
