package policy

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"reasonix/agent"
)

// needLandlock skips where the kernel has no Landlock, except in CI.
func needLandlock(t *testing.T) {
	t.Helper()
	if err := landlockUsable(false); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("Landlock is not usable: %v", err)
		}
		t.Fatalf("Landlock is not usable, and CI requires the sandbox tests: %v", err)
	}
}

// eachSandbox runs f once per OS sandbox this host offers: Landlock from
// a restricted thread of this process (StartShell: the shared read layer
// and the call's write layer) and bubblewrap.
func eachSandbox(t *testing.T, f func(t *testing.T, kind string)) {
	t.Run(SandboxLandlock+"-thread", func(t *testing.T) {
		needLandlock(t)
		viaThread = true
		t.Cleanup(func() { viaThread = false })
		f(t, SandboxLandlock)
	})
	t.Run(SandboxBwrap, func(t *testing.T) { needBwrap(t); f(t, SandboxBwrap) })
}

// viaThread makes runSandboxed start Landlock-sandboxed bash with
// StartShell instead of the helper.
var viaThread bool

func confined(t *testing.T, c SandboxConfig) *Confinement {
	t.Helper()
	conf, err := NewConfinement(c)
	if err != nil {
		t.Fatal(err)
	}
	if conf.SandboxKind() != c.force || !conf.ShellSandboxed() {
		t.Fatalf("SandboxKind() = %q, ShellSandboxed() = %v; want %q", conf.SandboxKind(), conf.ShellSandboxed(), c.force)
	}
	t.Cleanup(func() { conf.Close() })
	return conf
}

// dirSnapshot lists every file under dir with its content.
func dirSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = string(b)
		} else {
			out[p] = fi.Mode().Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSandboxKeepsWritesInside(t *testing.T) {
	eachSandbox(t, func(t *testing.T, kind string) {
		ws, outside := hostDirs(t)
		if err := os.WriteFile(filepath.Join(outside, "marker"), []byte("untouched"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(outside, "tree", "deep"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "src"), []byte("payload"), 0o644); err != nil {
			t.Fatal(err)
		}
		realTmp := "reasonix-sandbox-probe-" + strconv.Itoa(os.Getpid()) + "-" + kind
		t.Cleanup(func() { os.Remove(filepath.Join("/tmp", realTmp)) })
		c := confined(t, SandboxConfig{WorkspaceRoot: ws, force: kind})
		before := dirSnapshot(t, outside)
		probes := []string{
			"rm -rf " + outside,
			"rm -rf " + outside + "/tree " + outside + "/marker",
			"echo x > ../outside/marker",
			"echo x > ../../" + filepath.Base(filepath.Dir(outside)) + "/outside/new",
			"echo x | tee " + outside + "/tee",
			"cp src " + outside + "/cp",
			"dd if=src of=" + outside + "/dd",
			"dd if=src of=" + outside + "/marker conv=notrunc",
			"mv src " + outside + "/moved",
			"ln src " + outside + "/hardlink",
			"mkdir " + outside + "/newdir",
			"sort -o " + outside + "/sorted src",
			"echo x > dirlink/viadirlink",
			": > " + outside + "/marker",
		}
		for _, p := range probes {
			out, err := runSandboxed(t, c, p)
			if err == nil {
				t.Errorf("%q succeeded under %s: %s", p, kind, out)
			}
		}
		// bwrap's /tmp is a private tmpfs, Landlock's /tmp is read-only:
		// either way the host's /tmp must not change.
		_, _ = runSandboxed(t, c, "cd /tmp && touch "+realTmp)
		if after := dirSnapshot(t, outside); len(after) != len(before) {
			t.Errorf("the outside directory changed: before %v, after %v", before, after)
		} else {
			for k, v := range before {
				if after[k] != v {
					t.Errorf("%s changed: %q -> %q", k, v, after[k])
				}
			}
		}
		if _, err := os.Stat(filepath.Join("/tmp", realTmp)); err == nil {
			t.Errorf("the real /tmp changed under %s", kind)
		}
		// Control: the workspace and the private tmp are writable.
		out, err := runSandboxed(t, c, `echo in > inside && mkdir -p d/e && mv inside d/e/moved && echo t > "${TMPDIR:-/tmp}/t" && cat "${TMPDIR:-/tmp}/t" && rm -rf d`)
		if err != nil || !strings.Contains(out, "t") {
			t.Fatalf("writing inside failed under %s: %v: %s", kind, err, out)
		}
		if _, err := os.Stat(filepath.Join(ws, "src")); err != nil {
			t.Errorf("src is gone: %v", err)
		}
	})
}

func TestSandboxHidesForbidRead(t *testing.T) {
	eachSandbox(t, func(t *testing.T, kind string) {
		ws, outside := hostDirs(t)
		keys := filepath.Join(outside, "keys")
		if err := os.MkdirAll(keys, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, body := range map[string]string{filepath.Join(keys, "id"): "PRIVATE", filepath.Join(outside, "token"): "TOKEN", filepath.Join(outside, "plain"): "PLAIN"} {
			if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(filepath.Join(outside, "token"), filepath.Join(ws, "tokenlink")); err != nil {
			t.Fatal(err)
		}
		c := confined(t, SandboxConfig{WorkspaceRoot: ws, ForbidRead: []string{keys, filepath.Join(outside, "token")}, force: kind})
		out, _ := runSandboxed(t, c, "cat "+keys+"/id; cat "+outside+"/token; cat tokenlink; cat ../outside/keys/id; cp "+outside+"/token stolen; cat stolen")
		if strings.Contains(out, "PRIVATE") || strings.Contains(out, "TOKEN") {
			t.Fatalf("hidden content readable under %s: %q", kind, out)
		}
		// Control: what is not hidden stays readable, next to what is.
		// (Not `ls /`: listing / would list the shared /tmp, which Landlock hides.)
		if out, err := runSandboxed(t, c, "cat "+outside+"/plain && ls /usr "+filepath.Dir(outside)+" >/dev/null && git --version >/dev/null"); err != nil || !strings.Contains(out, "PLAIN") {
			t.Fatalf("a file beside hidden ones is unreadable under %s: %v: %q", kind, err, out)
		}
	})
}

func TestSandboxNetwork(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"))
			conn.Close()
		}
	}()
	defer func() { ln.Close(); <-done }()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	scripts := []string{"exec 3<>/dev/tcp/127.0.0.1/" + port}
	if _, err := exec.LookPath("curl"); err == nil {
		scripts = append(scripts, "curl -sf --max-time 5 http://127.0.0.1:"+port+"/")
	}
	eachSandbox(t, func(t *testing.T, kind string) {
		for _, network := range []bool{false, true} {
			c := confined(t, SandboxConfig{WorkspaceRoot: t.TempDir(), Network: network, force: kind})
			for _, s := range scripts {
				out, err := runSandboxed(t, c, s)
				if reached := err == nil; reached != network {
					t.Errorf("%s, network=%v: %q reached the loopback listener = %v (%s)", kind, network, s, reached, out)
				}
			}
		}
	})
}

func TestSandboxModes(t *testing.T) {
	for _, tc := range []struct {
		bash    string
		wantErr bool
	}{{"", false}, {"auto", false}, {"require", false}, {"enforce", false}, {"off", false}, {"sometimes", true}} {
		c, err := NewConfinement(SandboxConfig{WorkspaceRoot: t.TempDir(), Bash: tc.bash})
		if (err != nil) != tc.wantErr {
			t.Fatalf("bash = %q: err = %v", tc.bash, err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), `"require"`) {
				t.Errorf("the error does not list the modes: %v", err)
			}
			continue
		}
		switch {
		case tc.bash == "off":
			if c.Shell() != nil || c.ShellSandboxed() || c.SandboxKind() != "" {
				t.Errorf("off: Shell %v, sandboxed %v, kind %q", c.Shell(), c.ShellSandboxed(), c.SandboxKind())
			}
		case landlockUsable(false) == nil:
			// The test binary is a helper and the kernel has Landlock:
			// every mode but off picks it.
			if c.SandboxKind() != SandboxLandlock {
				t.Errorf("bash = %q: kind %q, want landlock", tc.bash, c.SandboxKind())
			}
		}
	}
	// require with nothing usable refuses; auto with nothing usable runs
	// unconfined.
	req, err := NewConfinement(SandboxConfig{WorkspaceRoot: t.TempDir(), Bash: "require", Bwrap: "/nonexistent/bwrap", force: SandboxBwrap})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := req.Shell().WrapShell(req.Root(), "true"); err == nil || !req.ShellRefused() || req.ShellSandboxed() {
		t.Errorf("require without a sandbox: err %v, refused %v", err, req.ShellRefused())
	}
	auto, err := NewConfinement(SandboxConfig{WorkspaceRoot: t.TempDir(), Bash: "auto", Bwrap: "/nonexistent/bwrap", force: SandboxBwrap})
	if err != nil {
		t.Fatal(err)
	}
	if auto.Shell() != nil || auto.ShellSandboxed() || auto.ShellRefused() {
		t.Errorf("auto without a sandbox: Shell %v", auto.Shell())
	}
}

func TestLandlockClaimedWritesOnlyTheClaim(t *testing.T) {
	needLandlock(t)
	ws, _ := hostDirs(t)
	if err := os.MkdirAll(filepath.Join(ws, "claimed"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := confined(t, SandboxConfig{WorkspaceRoot: ws, force: SandboxLandlock})
	shell, err := c.Claimed([]string{"claimed"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(script string) error {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = ws
		if err := shell.(agent.ShellStarter).StartShell(cmd); err != nil {
			t.Fatalf("StartShell: %v", err)
		}
		return cmd.Wait()
	}
	if err := run("echo ok > claimed/a.txt"); err != nil {
		t.Fatalf("write inside the claim: %v", err)
	}
	if err := run("echo no > outside-claim.txt"); err == nil {
		t.Error("a write outside the claim (but inside the workspace) succeeded")
	}
}

func TestCoverSkipsHiddenPaths(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"a/b/secret", "a/c", "d"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "a/b/f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "a/b/secret"), filepath.Join(base, "a/link")); err != nil {
		t.Fatal(err)
	}
	c := coverOf(base, []string{filepath.Join(base, "a/b/secret")})
	rel := func(ps []string) string {
		var out []string
		for _, p := range ps {
			r, _ := filepath.Rel(base, p)
			out = append(out, r)
		}
		return strings.Join(out, ",")
	}
	if got := rel(c.dirs) + "|" + rel(c.files) + "|" + rel(c.walked); got != "a/c,d|a/b/f|.,a,a/b" {
		t.Errorf("cover = %s", got)
	}
}

func TestLandlockStartShellConfinesOnlyTheChild(t *testing.T) {
	needLandlock(t)
	ws, outside := hostDirs(t)
	hidden := filepath.Join(outside, "hidden")
	if err := os.WriteFile(hidden, []byte("HIDDEN"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := confined(t, SandboxConfig{WorkspaceRoot: ws, ForbidRead: []string{hidden}, force: SandboxLandlock})
	starter, ok := c.Shell().(interface{ StartShell(*exec.Cmd) error })
	if !ok {
		t.Fatal("the Landlock shell has no StartShell")
	}
	run := func(script string) (string, error) {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = ws
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := starter.StartShell(cmd); err != nil {
			t.Fatalf("StartShell: %v", err)
		}
		err := cmd.Wait()
		return out.String(), err
	}
	for _, p := range []string{"rm -rf " + outside, "echo x > ../outside/new", "cat " + hidden, "touch /tmp/reasonix-startshell-probe"} {
		if out, err := run(p); err == nil {
			t.Errorf("%q succeeded: %s", p, out)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
		t.Errorf("the outside directory changed: %v", err)
	}
	if out, err := run(`echo in > inside && echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`); err != nil || out != "t\n" {
		t.Fatalf("writing inside failed: %v: %q", err, out)
	}
	// The test process itself stays unrestricted, on every thread.
	for range 20 {
		if err := os.WriteFile(filepath.Join(outside, "parent"), []byte("p"), 0o644); err != nil {
			t.Fatalf("the parent process was restricted: %v", err)
		}
	}
}

// Sandboxes that hide the same paths share one read layer, and each still
// writes only its own workspace; a directory listed entry by entry (beside
// a hidden path) that gains an entry afterwards is listed again, so the
// new entry is readable and the hidden path still is not.
func TestLandlockReadLayerShared(t *testing.T) {
	needLandlock(t)
	base, err := os.MkdirTemp("/var/tmp", "policy-layers-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws1, ws2 := filepath.Join(base, "ws1"), filepath.Join(base, "ws2")
	secret := filepath.Join(base, "secret")
	for _, d := range []string{ws1, ws2} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	viaThread = true
	t.Cleanup(func() { viaThread = false })
	c1 := confined(t, SandboxConfig{WorkspaceRoot: ws1, ForbidRead: []string{secret}, force: SandboxLandlock})
	c2 := confined(t, SandboxConfig{WorkspaceRoot: ws2, ForbidRead: []string{secret}, force: SandboxLandlock})
	key := strings.Join(c1.forbidden, "\x00")
	layer := func() *readLayer {
		readLayers.mu.Lock()
		defer readLayers.mu.Unlock()
		return readLayers.byKey[key]
	}
	var first *readLayer
	for i, c := range []*Confinement{c1, c2} {
		own, other := []string{ws1, ws2}[i], []string{ws2, ws1}[i]
		if out, err := runSandboxed(t, c, "echo mine > "+own+"/f && cat "+own+"/f"); err != nil || out != "mine\n" {
			t.Fatalf("sandbox %d cannot write its workspace: %v: %q", i+1, err, out)
		}
		if out, err := runSandboxed(t, c, "echo theirs > "+other+"/g"); err == nil {
			t.Errorf("sandbox %d wrote the other workspace: %q", i+1, out)
		}
		if out, _ := runSandboxed(t, c, "cat "+secret); strings.Contains(out, "SECRET") {
			t.Errorf("sandbox %d read the hidden file", i+1)
		}
		if i == 0 {
			first = layer()
		}
	}
	shared := layer()
	if shared == nil || shared != first {
		t.Fatalf("the two sandboxes did not share one read layer (%p, %p)", first, shared)
	}

	// base is listed entry by entry (it holds the hidden file): a new
	// entry there makes the next sandbox list it again.
	late := filepath.Join(base, "late")
	if err := os.Mkdir(late, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(late, "note"), []byte("NOTE"), 0o644); err != nil {
		t.Fatal(err)
	}
	c3 := confined(t, SandboxConfig{WorkspaceRoot: ws1, ForbidRead: []string{secret}, force: SandboxLandlock})
	if out, err := runSandboxed(t, c3, "cat "+late+"/note"); err != nil || out != "NOTE" {
		t.Errorf("an entry made after the read layer was built is unreadable: %v: %q", err, out)
	}
	if out, _ := runSandboxed(t, c3, "cat "+secret); strings.Contains(out, "SECRET") {
		t.Error("the rebuilt read layer lets the hidden file be read")
	}
	if rebuilt := layer(); rebuilt == shared {
		t.Error("the read layer was not rebuilt after its directory changed")
	}
}

// The Landlock sandbox has no argv form: the old `__sandbox-exec` helper
// ran bash outside the supervisor's watch (exec deny rules, sockets,
// metadata), so WrapShell refuses and bash starts from the thread.
func TestLandlockHasNoUnsupervisedHelper(t *testing.T) {
	needLandlock(t)
	ws, _ := hostDirs(t)
	c := confined(t, SandboxConfig{WorkspaceRoot: ws, force: SandboxLandlock})
	if argv, err := c.Shell().WrapShell(ws, "true"); err == nil {
		t.Fatalf("WrapShell = %q: an argv that runs bash outside the supervisor", argv)
	}
	if err := os.Mkdir(filepath.Join(ws, "claimed"), 0o755); err != nil {
		t.Fatal(err)
	}
	claimed, err := c.Claimed([]string{"claimed"})
	if err != nil {
		t.Fatal(err)
	}
	if argv, err := claimed.WrapShell(ws, "true"); err == nil {
		t.Fatalf("Claimed().WrapShell = %q", argv)
	}
	if _, ok := c.Shell().(agent.ShellStarter); !ok {
		t.Fatal("the Landlock shell cannot start bash itself")
	}
}
