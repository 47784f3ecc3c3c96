package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"reasonix/config"
	"reasonix/internal/secretenv"
	"reasonix/runner"
)

// The variables a container or a systemd unit sets instead of writing a
// config file. They sit between the flags and the config file: a flag
// beats the variable, the variable beats the file, the file beats the
// default. An empty value counts as unset, because env files and compose
// files write "NAME=" for a value left out.
const (
	envAddr    = "REASONIX_ADDR"      // [serve] addr
	envDataDir = "REASONIX_DATA_DIR"  // [store] path
	envDSN     = "REASONIX_STORE_DSN" // the Postgres DSN itself: driver = postgres
	envConfig  = "REASONIX_CONFIG"    // the --config file
)

// configFileFromEnv is the config file to load: the --config flag when
// given, else $REASONIX_CONFIG, else "" (the usual lookup).
func configFileFromEnv(flagValue string, env func(string) (string, bool)) string {
	if flagValue != "" {
		return flagValue
	}
	return lookupSet(env, envConfig)
}

// loadCheckedServiceConfig is serve's configuration, checked by the rules
// config check runs (checkConfig) before serve touches anything: what
// config check refuses, serve refuses, with the same message.
func loadCheckedServiceConfig(file string) (*config.Config, error) {
	cfg, err := loadServiceConfig(file)
	if err != nil {
		return nil, err
	}
	if err := sealEnvironment(cfg); err != nil {
		return nil, err
	}
	if err := checkConfig(cfg, nil); err != nil {
		return nil, err
	}
	return cfg, nil
}

// applyServiceEnv lays the service variables over a loaded configuration
// and validates the result again, so a bad value is reported under the
// variable's name rather than the file's.
func applyServiceEnv(cfg *config.Config, env func(string) (string, bool)) error {
	changed := false
	if v := lookupSet(env, envAddr); v != "" {
		cfg.Serve.Addr = v
		cfg.SetOrigin("serve.addr", "$"+envAddr)
		changed = true
	}
	if v := lookupSet(env, envDataDir); v != "" {
		// A relative path would move with the working directory of
		// whatever starts the process; pin it now.
		abs, err := filepath.Abs(v)
		if err != nil {
			return fmt.Errorf("$%s: %w", envDataDir, err)
		}
		cfg.Store.Path = abs
		cfg.SetOrigin("store.path", "$"+envDataDir)
		changed = true
	}
	if lookupSet(env, envDSN) != "" {
		// The DSN stays in the environment, where openStore reads it by
		// name: it is a secret and never copied into the configuration.
		cfg.Store.Driver = config.DriverPostgres
		cfg.Store.DSNEnv = envDSN
		cfg.SetOrigin("store.driver", "$"+envDSN)
		cfg.SetOrigin("store.dsn_env", "$"+envDSN)
		changed = true
	}
	if !changed {
		return nil
	}
	return cfg.Validate()
}

// apiTokenFromEnv is the value of the variable [serve] api_token_env
// names, "" when it names none; a named variable that is not set is an
// error, for serve and config check alike.
func apiTokenFromEnv(cfg *config.Config) (string, error) {
	name := cfg.Serve.APITokenEnv
	if name == "" {
		return "", nil
	}
	v := strings.TrimSpace(secretenv.Getenv(name))
	if v == "" {
		return "", &configError{fmt.Errorf("[serve] api_token_env names $%s, which is not set", name)}
	}
	return v, nil
}

// lookupSet returns the variable's value trimmed of blanks, "" when unset.
func lookupSet(env func(string) (string, bool), name string) string {
	v, _ := env(name)
	return strings.TrimSpace(v)
}

// logFormat is serve's --log-format: "json" (one object per line, for
// journald, Docker and Kubernetes log collectors) or "text" (key=value,
// for a person). "" picks by the output: text on a terminal, else json.
type logFormat string

func (f *logFormat) String() string { return string(*f) }

func (f *logFormat) Set(s string) error {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "json", "text":
		*f = logFormat(s)
		return nil
	}
	return errLogFormat
}

var errLogFormat = errors.New("want json or text")

// resolve is the format to use for output w.
func (f logFormat) resolve(w io.Writer) logFormat {
	if f != "" {
		return f
	}
	if isTerminal(w) {
		return "text"
	}
	return "json"
}

// handler writes records to w in the format f resolves to for w.
func (f logFormat) handler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	if f.resolve(w) == "text" {
		return slog.NewTextHandler(w, opts)
	}
	return slog.NewJSONHandler(w, opts)
}

// runnerSettings is the part of the runner's configuration that the
// service configuration decides; serve adds the wiring (store, node,
// providers, workspaces), and configRules validates it as runner.New will.
func runnerSettings(cfg *config.Config) runner.Config {
	return runner.Config{
		Settings: cfg,
		Version:  version,
		// How nodes hand tasks to each other (docs/SPEC.md, "Nodes"):
		// drain_timeout 0 means hand over at once.
		DrainTimeout:      cmp.Or(cfg.Serve.DrainTimeout, -1),
		StaleAfter:        cfg.Serve.StaleAfter,
		HeartbeatInterval: cfg.Serve.StaleAfter / 6,
	}
}
