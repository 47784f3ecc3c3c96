package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/config"
)

// loadWithEnv loads file the way loadServiceConfig does, with env instead
// of the process environment and no user home.
func loadWithEnv(t *testing.T, file string, env map[string]string) (*config.Config, error) {
	t.Helper()
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := config.Load(config.LoadOptions{
		File: configFileFromEnv(file, lookup), Home: t.TempDir(), Env: lookup, SkipMCPJSON: true,
		ProjectDir: t.TempDir(),
	})
	if err != nil {
		return nil, err
	}
	return cfg, applyServiceEnv(cfg, lookup)
}

func writeEnvFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestServiceEnvSitsBetweenFlagsAndFile(t *testing.T) {
	dir := t.TempDir()
	file := writeEnvFile(t, dir, "reasonix.toml", "[serve]\naddr = \"127.0.0.1:9000\"\n[store]\npath = \"from-file\"\n")
	other := writeEnvFile(t, dir, "other.toml", "[serve]\naddr = \"127.0.0.1:9100\"\n")

	// The file alone.
	cfg, err := loadWithEnv(t, file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Serve.Addr != "127.0.0.1:9000" || cfg.DataDir() != filepath.Join(dir, "from-file") || cfg.Store.Driver != config.DriverSQLite {
		t.Fatalf("file only: addr %q, data %q, driver %q", cfg.Serve.Addr, cfg.DataDir(), cfg.Store.Driver)
	}

	// The variables beat the file; a relative data dir is pinned.
	t.Chdir(dir)
	cfg, err = loadWithEnv(t, file, map[string]string{
		envAddr: "0.0.0.0:8080", envDataDir: "state", envDSN: "postgres://u:p@db/reasonix",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Serve.Addr != "0.0.0.0:8080" || cfg.Origin("serve.addr") != "$REASONIX_ADDR" {
		t.Errorf("addr = %q from %q", cfg.Serve.Addr, cfg.Origin("serve.addr"))
	}
	if cfg.DataDir() != filepath.Join(dir, "state") {
		t.Errorf("data dir = %q", cfg.DataDir())
	}
	if cfg.Store.Driver != config.DriverPostgres || cfg.Store.DSNEnv != envDSN {
		t.Errorf("store = %+v", cfg.Store)
	}

	// REASONIX_CONFIG names the file when no --config is given; the flag wins.
	cfg, err = loadWithEnv(t, "", map[string]string{envConfig: other})
	if err != nil || cfg.Serve.Addr != "127.0.0.1:9100" {
		t.Fatalf("REASONIX_CONFIG: %v, addr %q", err, cfg.Serve.Addr)
	}
	cfg, err = loadWithEnv(t, file, map[string]string{envConfig: other})
	if err != nil || cfg.Serve.Addr != "127.0.0.1:9000" {
		t.Fatalf("--config over REASONIX_CONFIG: %v, addr %q", err, cfg.Serve.Addr)
	}

	// Empty values, as env files write them, change nothing.
	cfg, err = loadWithEnv(t, file, map[string]string{envAddr: "", envDataDir: " ", envDSN: "", envConfig: ""})
	if err != nil || cfg.Serve.Addr != "127.0.0.1:9000" || cfg.Store.Driver != config.DriverSQLite {
		t.Fatalf("empty variables: %v, %+v %+v", err, cfg.Serve, cfg.Store)
	}
}

func TestServiceEnvErrorsNameTheVariable(t *testing.T) {
	_, err := loadWithEnv(t, "", map[string]string{envAddr: "no-port"})
	if err == nil || !strings.Contains(err.Error(), "$REASONIX_ADDR") || !strings.Contains(err.Error(), "serve.addr") {
		t.Errorf("bad REASONIX_ADDR: %v", err)
	}
	_, err = loadWithEnv(t, "", map[string]string{envConfig: filepath.Join(t.TempDir(), "missing.toml")})
	if err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Errorf("missing REASONIX_CONFIG file: %v", err)
	}
}

func TestLogFormat(t *testing.T) {
	var f logFormat
	for _, bad := range []string{"yaml", "", "jsonl"} {
		if err := f.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
	if err := f.Set(" TEXT "); err != nil || f != "text" {
		t.Fatalf("Set(TEXT) = %v, %q", err, f)
	}

	// Unset: a buffer is not a terminal, so JSON.
	var buf bytes.Buffer
	slog.New(logFormat("").handler(&buf, nil)).Info("hello", "k", "v")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec["msg"] != "hello" || rec["k"] != "v" {
		t.Fatalf("default on a buffer = %q (%v)", buf.String(), err)
	}
	buf.Reset()
	slog.New(logFormat("text").handler(&buf, nil)).Info("hello", "k", "v")
	if !strings.Contains(buf.String(), "msg=hello k=v") {
		t.Errorf("text = %q", buf.String())
	}
}

func TestServeRejectsUnknownLogFormat(t *testing.T) {
	_, stderr, code := cliRun("serve", "--log-format", "yaml")
	if code != exitUsage || !strings.Contains(stderr, "want json or text") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

func TestProbeAddrUsesLoopbackForEveryInterface(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:8080":   "127.0.0.1:8080",
		":9090":          "127.0.0.1:9090",
		"[::]:8080":      "[::1]:8080",
		"10.0.0.5:8080":  "10.0.0.5:8080",
		"127.0.0.1:8081": "127.0.0.1:8081",
	} {
		if got := probeAddr(in); got != want {
			t.Errorf("probeAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
