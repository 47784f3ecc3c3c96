package policy

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/internal/testenv"
)

// needBwrap skips where bubblewrap is missing, unless the environment
// promises it (CI, make test): there a missing bwrap fails the test.
func needBwrap(t *testing.T) {
	t.Helper()
	testenv.LookPath(t, testenv.Bwrap)
}

// hostDirs builds the fixture outside /tmp: the sandbox gives bash a
// private /tmp, which would hide a fixture there and make a refused write
// indistinguishable from a missing directory.
func hostDirs(t *testing.T) (ws, outside string) {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "policy-bwrap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	return sandboxDirsIn(t, base)
}

func runSandboxed(t *testing.T, c *Confinement, script string) (string, error) {
	t.Helper()
	if l, ok := c.Shell().(*landlockShell); ok && viaThread {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = c.Root()
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := l.StartShell(cmd); err != nil {
			t.Fatalf("StartShell: %v", err)
		}
		err := cmd.Wait()
		return out.String(), err
	}
	argv, err := c.Shell().WrapShell(c.Root(), script)
	if err != nil {
		t.Fatalf("WrapShell: %v", err)
	}
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	return string(out), err
}

func TestBwrapConfinesWrites(t *testing.T) {
	needBwrap(t)
	ws, outside := hostDirs(t)
	c, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, force: SandboxBwrap})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := runSandboxed(t, c, "echo hi > inside.txt && echo tmp > /tmp/t && cat /tmp/t"); err != nil {
		t.Fatalf("write inside: %v: %s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("inside.txt = %q, %v", b, err)
	}
	if out, err := runSandboxed(t, c, "test -f "+outside+"/secret"); err != nil {
		t.Fatalf("the outside directory should be visible read-only: %v: %s", err, out)
	}
	for _, script := range []string{"echo x > " + outside + "/out.txt", "echo x > dirlink/out.txt", "touch " + outside + "/out.txt"} {
		if out, err := runSandboxed(t, c, script); err == nil {
			t.Errorf("%q succeeded: %s", script, out)
		}
		if _, err := os.Stat(filepath.Join(outside, "out.txt")); err == nil {
			t.Fatalf("%q wrote outside the workspace", script)
		}
	}
}

func TestBwrapHidesForbidRead(t *testing.T) {
	needBwrap(t)
	ws, outside := hostDirs(t)
	keys := filepath.Join(outside, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keys, "id"), []byte("PRIVATE"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, force: SandboxBwrap, ForbidRead: []string{keys, filepath.Join(outside, "secret")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("TOPSECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := runSandboxed(t, c, "cat "+keys+"/id; cat "+outside+"/secret; cat filelink; ls "+keys)
	if strings.Contains(out, "PRIVATE") || strings.Contains(out, "TOPSECRET") || strings.Contains(out, "id\n") {
		t.Fatalf("forbidden content visible: %q", out)
	}
	if out, err := runSandboxed(t, c, "cat "+ws+"/../outside/keys/id"); err == nil && strings.Contains(out, "PRIVATE") {
		t.Fatalf("forbidden file readable through ..: %q", out)
	}
	// Control: without forbid_read the same script does see the secrets.
	open, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, force: SandboxBwrap})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := runSandboxed(t, open, "cat "+keys+"/id"); !strings.Contains(out, "PRIVATE") {
		t.Fatalf("control: expected to read the key without forbid_read, got %q", out)
	}
}

func TestBwrapNetwork(t *testing.T) {
	needBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := "exec 3<>/dev/tcp/127.0.0.1/" + itoa(port)
	for _, network := range []bool{false, true} {
		c, err := NewConfinement(SandboxConfig{WorkspaceRoot: t.TempDir(), Network: network, force: SandboxBwrap})
		if err != nil {
			t.Fatal(err)
		}
		out, err := runSandboxed(t, c, script)
		if reached := err == nil; reached != network {
			t.Errorf("network=%v: reached host loopback=%v (%s)", network, reached, out)
		}
	}
	ln.Close()
	<-done
}

func TestBwrapMissingRefusesBash(t *testing.T) {
	c, err := NewConfinement(SandboxConfig{WorkspaceRoot: t.TempDir(), Bwrap: "/nonexistent/bwrap", Bash: "require", force: SandboxBwrap})
	if err != nil {
		t.Fatal(err)
	}
	argv, err := c.Shell().WrapShell(c.Root(), "true")
	if err == nil || argv != nil || !strings.Contains(err.Error(), `bash = "off"`) {
		t.Fatalf("WrapShell without bwrap = %v, %v; want a refusal", argv, err)
	}
	off, err := NewConfinement(SandboxConfig{WorkspaceRoot: t.TempDir(), Bash: "off"})
	if err != nil || off.Shell() != nil {
		t.Fatalf("bash = off: Shell() = %v, %v; want nil", off.Shell(), err)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestClaimedSandboxWritesOnlyTheClaim(t *testing.T) {
	needBwrap(t)
	ws, _ := hostDirs(t)
	if err := os.MkdirAll(filepath.Join(ws, "claimed"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, force: SandboxBwrap})
	if err != nil {
		t.Fatal(err)
	}
	shell, err := c.Claimed([]string{"claimed"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(script string) error {
		argv, err := shell.WrapShell(ws, script)
		if err != nil {
			t.Fatalf("WrapShell: %v", err)
		}
		return exec.Command(argv[0], argv[1:]...).Run()
	}
	if err := run("echo ok > claimed/a.txt"); err != nil {
		t.Fatalf("write inside the claim: %v", err)
	}
	if err := run("echo no > outside-claim.txt"); err == nil {
		t.Error("a write outside the claim (but inside the workspace) succeeded")
	}
	if _, err := os.Stat(filepath.Join(ws, "outside-claim.txt")); err == nil {
		t.Error("outside-claim.txt exists")
	}
	if _, err := c.Claimed([]string{"../escape"}); err == nil {
		t.Error("a claim outside the workspace was accepted")
	}
	off, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, Bash: "off"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := off.Claimed([]string{"claimed"}); !errors.Is(err, ErrNoSandbox) {
		t.Errorf("bash = off: err = %v, want ErrNoSandbox", err)
	}
}
