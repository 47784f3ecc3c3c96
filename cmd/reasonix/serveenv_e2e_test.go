package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/runner/store/storetest"
)

// serveWithEnv starts `reasonix serve args...` configured only through the
// REASONIX_* service variables (plus env) the way a container is, and
// returns it once it serves. The token is read from dataDir.
func serveWithEnv(t *testing.T, e *e2e, dataDir string, env []string, args ...string) *service {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve"}, args...)...)
	cmd.Dir = e.work
	// No REASONIX_HOME with a config in it: the file comes from REASONIX_CONFIG.
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "FAKE_API_KEY=sk-secret-test-key"}, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &service{t: t, cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.done
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		line <- sc.Text()
		for sc.Scan() {
		}
	}()
	select {
	case l := <-line:
		m := servingLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("serve did not start: %q\n%s", l, s.stderr.String())
		}
		s.url = m[1]
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start in time\n%s", s.stderr.String())
	}
	tok, err := os.ReadFile(filepath.Join(dataDir, tokenFile))
	if err != nil {
		t.Fatalf("the token is not in REASONIX_DATA_DIR: %v", err)
	}
	s.token = strings.TrimSpace(string(tok))
	return s
}

// serviceConfigFile moves the e2e installation's config out of its home
// into a file that only REASONIX_CONFIG names.
func serviceConfigFile(t *testing.T, e *e2e) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.home, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "service.toml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestServeTakesItsSettingsFromTheEnvironment(t *testing.T) {
	e := newE2E(t, answer("configured from the environment"))
	dataDir := filepath.Join(t.TempDir(), "data")
	// Something else holds the address the file would use, so serving at
	// all shows the variable won over the file.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	e.configure("\n[serve]\naddr = \"" + busy.Addr().String() + "\"\n")
	// systemd's readiness protocol: the socket Type=notify units get.
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(t.TempDir(), "notify"), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer notify.Close()
	s := serveWithEnv(t, e, dataDir, []string{
		"REASONIX_CONFIG=" + serviceConfigFile(t, e),
		"REASONIX_ADDR=127.0.0.1:0",
		"REASONIX_DATA_DIR=" + dataDir,
		"NOTIFY_SOCKET=" + notify.LocalAddr().String(),
	})
	if msg := readNotify(t, notify); !strings.HasPrefix(msg, "READY=1\n") || !strings.Contains(msg, s.url) {
		t.Errorf("readiness notification = %q", msg)
	}
	// The health probe finds the service through the same variable.
	probeEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "REASONIX_ADDR=" + strings.TrimPrefix(s.url, "http://")}
	for _, args := range [][]string{{"health"}, {"health", "--ready"}} {
		probe := exec.Command(binary, args...)
		probe.Env = probeEnv
		if out, err := probe.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "ok: ") {
			t.Errorf("%v: %v %s", args, err, out)
		}
	}
	id := s.submit("say where the settings came from", nil)
	if got := s.waitState(id, "succeeded", "failed"); got.State != "succeeded" {
		t.Fatalf("task = %+v\n%s", got, s.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(e.home, tokenFile)); err == nil {
		t.Errorf("the service wrote into REASONIX_HOME instead of REASONIX_DATA_DIR")
	}

	// Not on a terminal, every log line is one JSON object.
	s.cmd.Process.Signal(os.Interrupt)
	if msg := readNotify(t, notify); msg != "STOPPING=1" {
		t.Errorf("stop notification = %q", msg)
	}
	<-s.done
	probe := exec.Command(binary, "health")
	probe.Env = probeEnv
	if out, err := probe.CombinedOutput(); exitCodeOf(err) != 1 || !strings.HasPrefix(string(out), "unhealthy: ") {
		t.Errorf("health of a stopped service: %v %s", err, out)
	}
	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Level == "" || rec.Msg == "" {
			t.Fatalf("log line is not a JSON record: %q (%v)", line, err)
		}
		msgs = append(msgs, rec.Msg)
	}
	if !strings.Contains(strings.Join(msgs, "\n"), "reasonix serving") {
		t.Errorf("no serving record in %q", msgs)
	}
}

func TestServeFlagsBeatTheEnvironment(t *testing.T) {
	e := newE2E(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dataDir := t.TempDir()
	s := serveWithEnv(t, e, dataDir, []string{
		"REASONIX_CONFIG=" + serviceConfigFile(t, e),
		"REASONIX_ADDR=" + busy.Addr().String(), // would fail to listen
		"REASONIX_DATA_DIR=" + dataDir,
	}, "--addr", "127.0.0.1:0", "--log-format", "text")
	s.waitFor(func() bool { return strings.Contains(s.stderr.String(), "level=INFO msg=\"reasonix serving\"") }, "a text log line")
}

func TestServeReadsTheStoreDSNFromTheEnvironment(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	e := newE2E(t, answer("stored in postgres"))
	dataDir := t.TempDir()
	s := serveWithEnv(t, e, dataDir, []string{
		"REASONIX_CONFIG=" + serviceConfigFile(t, e),
		"REASONIX_ADDR=127.0.0.1:0",
		"REASONIX_DATA_DIR=" + dataDir,
		"REASONIX_STORE_DSN=" + dsn,
	})
	id := s.submit("use the shared database", nil)
	if got := s.waitState(id, "succeeded", "failed"); got.State != "succeeded" {
		t.Fatalf("task = %+v\n%s", got, s.stderr.String())
	}
	if !strings.Contains(s.stderr.String(), `"store":"postgres"`) {
		t.Errorf("the service did not use Postgres:\n%s", s.stderr.String())
	}
	if strings.Contains(s.stderr.String(), dsn) {
		t.Errorf("the DSN reached the log")
	}
	if _, err := os.Stat(filepath.Join(dataDir, "reasonix.db")); err == nil {
		t.Errorf("a SQLite database was created next to the Postgres store")
	}
}

// readNotify reads one sd_notify datagram.
func readNotify(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	return string(buf[:n])
}

// exitCodeOf is the exit code of a finished command's error; -1 when it
// did not run.
func exitCodeOf(err error) int {
	var exit *exec.ExitError
	if err == nil {
		return 0
	}
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	return -1
}
