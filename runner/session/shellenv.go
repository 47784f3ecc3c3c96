package session

import (
	"os"
	"strings"

	"reasonix/config"
)

// ShellEnv is the environment for commands a model writes and for workspace
// setup: the process environment without the secrets the configuration
// names (provider keys, the store DSN, the API token), so a command cannot
// print them.
func ShellEnv(set *config.Config) []string {
	secret := map[string]bool{"REASONIX_API_TOKEN": true}
	for _, p := range set.Providers {
		if p.APIKeyEnv != "" {
			secret[p.APIKeyEnv] = true
		}
	}
	for _, name := range []string{set.Store.DSNEnv, set.Serve.APITokenEnv} {
		if name != "" {
			secret[name] = true
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !secret[name] {
			env = append(env, kv)
		}
	}
	return env
}
