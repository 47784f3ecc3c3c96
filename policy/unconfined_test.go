package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/policy"
	"reasonix/policy/policytest"
)

// TestAutoWithoutSandbox: when bash is not sandboxed, --auto lets a bash
// writer through only when it is proven to stay inside the workspace; the
// rest is asked, which is a refusal when nobody can be asked. Sandboxed,
// auto keeps allowing writers; rules and grants decide as before.
func TestAutoWithoutSandbox(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := mustPolicy(t, policy.Config{Allow: []string{"Bash(make:*)"}})
	unconfined := policy.GateConfig{Policy: p, Posture: policy.PostureAuto, Workdir: ws}
	sandboxed := unconfined
	sandboxed.ShellSandboxed = true
	for _, cmd := range []string{
		"rm -rf /abs", "echo x > ../../f", "cd /tmp && touch f", "tee /x", "sed -i s/a/b/ /etc/x", "cp a /tmp/b",
		"dd of=/tmp/x", "sort -o /tmp/x a", "sed -n 'w /tmp/x' a", "find . -fprint /tmp/x", "find /tmp -delete",
		"awk '{print > \"/tmp/x\"}' a", "git log --output=/tmp/x", "git config --global x.y z", "env touch /tmp/x",
		"timeout 5 touch /tmp/x", "nice touch /tmp/x", "nohup touch /tmp/x", "time touch /tmp/x", "command touch /tmp/x",
		"go test ./...", "go build $PKG",
	} {
		v := authorize(t, unconfined, cmd)
		if v.Allowed || v.Code != agent.RefusedUnattended || !strings.Contains(v.Reason, "outside the workspace") || !strings.Contains(v.Reason, "sandbox") {
			t.Errorf("%q unsandboxed: allowed=%v code=%q (%s)", cmd, v.Allowed, v.Code, v.Reason)
		}
		if v := authorize(t, sandboxed, cmd); !v.Allowed {
			t.Errorf("%q sandboxed: %+v", cmd, v)
		}
	}
	for _, cmd := range []string{
		"echo x > out.txt", "mkdir -p build && touch build/x", "sed -i s/a/b/ main.go", "cp a b", "git commit -am msg",
		"gofmt -w .", "go build ./...", "cat /etc/hostname", "make all", // read-only; an allow rule
	} {
		if v := authorize(t, unconfined, cmd); !v.Allowed {
			t.Errorf("%q unsandboxed: %+v", cmd, v)
		}
	}
	// allow_write roots count as inside.
	extra := t.TempDir()
	withExtra := unconfined
	withExtra.AllowWrite = []string{extra}
	if v := authorize(t, withExtra, "touch "+extra+"/x"); !v.Allowed {
		t.Errorf("allow_write: %+v", v)
	}
	// With a person to ask, the command becomes an approval request.
	a := policytest.NewApprover(policytest.Once())
	attended := unconfined
	attended.Approver = a
	if v := authorize(t, attended, "cp a /tmp/b"); !v.Allowed || len(a.Requests()) != 1 || !strings.Contains(a.Requests()[0].Reason, "outside the workspace") {
		t.Errorf("attended: %+v, requests %+v", v, a.Requests())
	}
	// yolo and the ask posture are unchanged.
	yolo := unconfined
	yolo.Posture = policy.PostureYolo
	if v := authorize(t, yolo, "cp a /tmp/b"); !v.Allowed {
		t.Errorf("yolo: %+v", v)
	}
}

func TestConfinementReportsSandboxAndRoots(t *testing.T) {
	ws, extra := t.TempDir(), t.TempDir()
	off, err := policy.NewConfinement(policy.SandboxConfig{WorkspaceRoot: ws, AllowWrite: []string{extra}, Bash: "off"})
	if err != nil {
		t.Fatal(err)
	}
	on, err := policy.NewConfinement(policy.SandboxConfig{WorkspaceRoot: ws, Bash: "enforce"})
	if err != nil {
		t.Fatal(err)
	}
	if off.ShellSandboxed() || !on.ShellSandboxed() {
		t.Errorf("ShellSandboxed: off=%v enforce=%v", off.ShellSandboxed(), on.ShellSandboxed())
	}
	w := off.Writable()
	if len(w) != 2 || w[0] != off.Root() {
		t.Errorf("Writable() = %q", w)
	}
	w[0] = "/changed"
	if off.Writable()[0] == "/changed" {
		t.Error("Writable returned its own slice")
	}
}
