// Package deploy holds the deployment files (docker, compose, systemd, k8s)
// and the tests that check them with the real tools: systemd-analyze for
// the unit, docker compose for the compose file. The Kubernetes manifests
// are checked by their own module, deploy/k8s/verify; the image and the
// compose stack run for real in deploy/e2e.
package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"reasonix/internal/testenv"
)

// drainDefault is how long serve lets running steps finish after SIGTERM
// by default; the unit and the compose file must wait longer.
const drainDefault = 20 * time.Second

// verifyUnit runs `systemd-analyze verify` on unit as installed in a
// scratch root that has the system's own units and an executable where
// ExecStart points, and returns what it printed. systemd-analyze exits 0
// even after warnings (an unknown key, a bad value), so any output counts.
func verifyUnit(t *testing.T, analyze, unit string) (string, error) {
	t.Helper()
	root := t.TempDir()
	units := "/usr/lib/systemd/system"
	if _, err := os.Stat(units); err != nil {
		units = "/lib/systemd/system"
	}
	for _, dir := range []string{"usr/lib/systemd", "etc/systemd/system", "usr/local/bin"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("cp", "-a", units, filepath.Join(root, "usr/lib/systemd/system")).CombinedOutput(); err != nil {
		t.Fatalf("copying the system's units: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/local/bin/reasonix"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/systemd/system/reasonix.service"), []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(analyze, "verify", "--man=no", "--root="+root, "reasonix.service")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func TestSystemdUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		testenv.Missing(t, testenv.Systemd, err)
	}
	data, err := os.ReadFile("systemd/reasonix.service")
	if err != nil {
		t.Fatal(err)
	}
	unit := string(data)
	if out, err := verifyUnit(t, analyze, unit); err != nil || out != "" {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The check can fail: a misspelt key and a bad value are reported.
	broken := strings.Replace(strings.Replace(unit, "TimeoutStopSec=", "TimeoutStopSecs=", 1), "ProtectSystem=strict", "ProtectSystem=very", 1)
	if out, _ := verifyUnit(t, analyze, broken); !strings.Contains(out, "TimeoutStopSecs") || !strings.Contains(out, "very") {
		t.Errorf("a broken unit passed verification: %q", out)
	}

	// What the deployment relies on, beyond what systemd can judge.
	for _, want := range []string{"Type=notify", "User=reasonix", "StateDirectory=reasonix", "ProtectSystem=strict", "KillSignal=SIGTERM"} {
		if !strings.Contains(unit, "\n"+want+"\n") {
			t.Errorf("the unit lacks %s", want)
		}
	}
	m := regexp.MustCompile(`\nTimeoutStopSec=(\S+)\n`).FindStringSubmatch(unit)
	if m == nil {
		t.Fatal("the unit sets no TimeoutStopSec")
	}
	if d, err := time.ParseDuration(m[1]); err != nil || d <= drainDefault {
		t.Errorf("TimeoutStopSec=%s: want a duration above the %v drain", m[1], drainDefault)
	}
}

// compose returns the command that runs Docker Compose: the docker CLI
// plugin when present, else the standalone docker-compose.
func compose(t *testing.T) []string {
	t.Helper()
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if path, err := exec.LookPath("docker-compose"); err == nil {
		return []string{path}
	} else {
		testenv.Missing(t, testenv.Compose, err)
	}
	return nil
}

func TestComposeFileIsValid(t *testing.T) {
	tool := compose(t)
	// A project directory as the docs set it up: the compose file, the
	// shared config and the env files copied from their examples.
	dir := t.TempDir()
	for src, dst := range map[string]string{
		"compose.yaml": "compose.yaml", "reasonix.toml": "reasonix.toml",
		"reasonix.env.example": "reasonix.env", "postgres.env.example": "postgres.env",
	} {
		data, err := os.ReadFile(filepath.Join("compose", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(tool[0], append(tool[1:], "config")...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.Contains(stderr.String(), "WARN") {
		t.Fatalf("%s config: %v\n%s", strings.Join(tool, " "), err, stderr.String())
	}
	norm := string(out)
	// Host networking everywhere (the tests here allow no bridge), and the
	// nodes wait for a healthy Postgres and outlast serve's drain on stop.
	if n := strings.Count(norm, "network_mode: host"); n != 3 {
		t.Errorf("%d of 3 services use the host network:\n%s", n, norm)
	}
	if n := strings.Count(norm, "condition: service_healthy"); n != 2 {
		t.Errorf("%d of 2 nodes wait for a healthy Postgres:\n%s", n, norm)
	}
	for _, m := range regexp.MustCompile(`stop_grace_period: (\S+)`).FindAllStringSubmatch(norm, -1) {
		if d, err := time.ParseDuration(m[1]); err != nil || d <= drainDefault {
			t.Errorf("stop_grace_period %s: want above the %v drain", m[1], drainDefault)
		}
	}

	// The check can fail: an unknown service key is an error.
	bad := strings.Replace(readFile(t, filepath.Join(dir, "compose.yaml")), "    stop_grace_period: 45s\n", "    stop_grace_periods: 45s\n", 1)
	if err := os.WriteFile(filepath.Join(dir, "compose.yaml"), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(tool[0], append(tool[1:], "config", "-q")...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("a compose file with an unknown key passed: %s", out)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
