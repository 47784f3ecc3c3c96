//go:build linux && (amd64 || arm64)

package policy

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"reasonix/internal/eventually"
)

// runStarted runs script the way the bash tool does: through StartShell
// where the shell has it (the thread spawner, bubblewrap from a filtered
// thread), else — the Landlock helper variant of eachSandbox — through
// WrapShell. It returns the output, the exit error and the refusals the
// supervisor recorded for the command.
func runStarted(t *testing.T, c *Confinement, script string) (string, error, []string) {
	t.Helper()
	var out strings.Builder
	var cmd *exec.Cmd
	_, isLandlock := c.Shell().(*landlockShell)
	starter, ok := c.Shell().(interface{ StartShell(*exec.Cmd) error })
	if ok && (!isLandlock || viaThread) {
		cmd = exec.Command("bash", "-c", script)
		cmd.Dir = c.Root()
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := starter.StartShell(cmd); err != nil {
			t.Fatalf("StartShell: %v", err)
		}
	} else {
		argv, err := c.Shell().WrapShell(c.Root(), script)
		if err != nil {
			t.Fatalf("WrapShell: %v", err)
		}
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	err := cmd.Wait()
	refusals := c.Shell().(interface{ TakeRefusals(int) []string }).TakeRefusals(cmd.Process.Pid)
	return out.String(), err, refusals
}

// eachSupervised runs f in each sandbox the bash tool starts through
// StartShell, all of which the supervisor watches: the Landlock thread
// and bubblewrap. The sandbox-exec helper (WrapShell) is not supervised.
func eachSupervised(t *testing.T, f func(t *testing.T, kind string)) {
	eachSandbox(t, func(t *testing.T, kind string) {
		if kind == SandboxLandlock && !viaThread {
			t.Skip("the sandbox-exec helper is not supervised; the bash tool starts bash through StartShell")
		}
		f(t, kind)
	})
}

// unixHTTP serves "pong" over HTTP on a UNIX socket at p until the test ends.
func unixHTTP(t *testing.T, p string) {
	t.Helper()
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o777); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("pong")) })}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(l) }()
	t.Cleanup(func() { srv.Shutdown(context.Background()); <-done })
}

func needCurl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
}

// A UNIX socket outside the writable roots is unreachable from the
// sandbox (the docker.sock route), also through a link planted in the
// workspace, unless allow_sockets names it; one inside the workspace
// works.
func TestSandboxRefusesOutsideUnixSockets(t *testing.T) {
	needCurl(t)
	eachSupervised(t, func(t *testing.T, kind string) {
		ws, outside := hostDirs(t)
		sock := filepath.Join(outside, "d.sock")
		unixHTTP(t, sock)
		inside := filepath.Join(ws, "in.sock")
		unixHTTP(t, inside)
		curl := func(p string) string { return "curl -sS --max-time 5 --unix-socket " + p + " http://x/" }

		c := confined(t, SandboxConfig{WorkspaceRoot: ws, force: kind})
		for _, probe := range []string{curl(sock), "ln -s " + sock + " link.sock && " + curl("link.sock"), "cd " + outside + " && " + curl("d.sock")} {
			out, err, refusals := runStarted(t, c, probe)
			if err == nil || strings.Contains(out, "pong") {
				t.Errorf("%s: %q reached the outside socket: %q", kind, probe, out)
			}
			if len(refusals) == 0 || !strings.Contains(refusals[0], sock) {
				t.Errorf("%s: %q: refusals = %q, want one naming %s", kind, probe, refusals, sock)
			}
		}
		if out, err, _ := runStarted(t, c, curl(inside)); err != nil || out != "pong" {
			t.Errorf("%s: the workspace's own socket: %v: %q", kind, err, out)
		}

		allowed := confined(t, SandboxConfig{WorkspaceRoot: ws, AllowSockets: []string{sock}, force: kind})
		if out, err, _ := runStarted(t, allowed, curl(sock)); err != nil || out != "pong" {
			t.Errorf("%s: an allow_sockets socket: %v: %q", kind, err, out)
		}
	})
}

// docker.sock, where a daemon runs, is refused like any outside socket.
func TestSandboxRefusesDockerSocket(t *testing.T) {
	needCurl(t)
	const docker = "/var/run/docker.sock"
	if c, err := net.Dial("unix", docker); err != nil {
		t.Skipf("no Docker daemon answers at %s", docker)
	} else {
		c.Close()
	}
	eachSupervised(t, func(t *testing.T, kind string) {
		ws, _ := hostDirs(t)
		c := confined(t, SandboxConfig{WorkspaceRoot: ws, force: kind})
		out, err, _ := runStarted(t, c, "curl -sS --max-time 5 --unix-socket "+docker+" http://x/version")
		if err == nil || strings.Contains(out, "ApiVersion") {
			t.Errorf("%s: docker.sock answered: %q", kind, out)
		}
	})
}

// A denied command is refused at exec however it is spelled: by name,
// path, a link, a copy, through another program; the refusal names the
// rule. Other commands run.
func TestSandboxDeniesExec(t *testing.T) {
	eachSupervised(t, func(t *testing.T, kind string) {
		ws, _ := hostDirs(t)
		c := confined(t, SandboxConfig{WorkspaceRoot: ws, ExecDenied: denyRM, ExecDenyNames: []string{"rm"}, force: kind})
		rm, err := exec.LookPath("rm")
		if err != nil {
			t.Fatal(err)
		}
		probes := []string{
			"rm victim",
			rm + " victim",
			"command rm victim",
			"env rm victim",
			"ln -sf " + rm + " ./alias && ./alias victim",
			"cp " + rm + " ./copy && ./copy victim",
			"cp " + rm + " \"$TMPDIR/copy\" && \"$TMPDIR/copy\" victim",
			"find . -name victim -exec rm {} +",
			"echo victim | xargs rm",
			"bash -c 'rm victim'",
			"awk 'BEGIN { system(\"rm victim\") }'",
		}
		for _, p := range probes {
			victim := filepath.Join(ws, "victim")
			if err := os.WriteFile(victim, []byte("v"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, _, refusals := runStarted(t, c, p)
			if _, err := os.Stat(victim); err != nil {
				t.Errorf("%s: %q deleted the file: %s", kind, p, out)
			}
			if len(refusals) == 0 || !strings.Contains(refusals[0], "refused by deny rule Bash(rm:*) at exec") {
				t.Errorf("%s: %q: refusals = %q", kind, p, refusals)
			}
		}
		if out, err, refusals := runStarted(t, c, "echo ok > f && cat f && ls f"); err != nil || out != "ok\nf\n" || len(refusals) > 0 {
			t.Errorf("%s: an allowed command: %v %q %q", kind, err, out, refusals)
		}
	})
}

// chmod, chown and utimes outside the writable roots are refused; inside
// they work.
func TestSandboxRefusesMetadataOutside(t *testing.T) {
	eachSupervised(t, func(t *testing.T, kind string) {
		ws, outside := hostDirs(t)
		target := filepath.Join(outside, "marker")
		if err := os.WriteFile(target, []byte("m"), 0o600); err != nil {
			t.Fatal(err)
		}
		before, err := os.Stat(target)
		if err != nil {
			t.Fatal(err)
		}
		c := confined(t, SandboxConfig{WorkspaceRoot: ws, force: kind})
		for _, p := range []string{
			"chmod 777 " + target,
			"ln -s " + target + " l && chmod 777 l",
			"perl -e 'open(F, \"<\", $ARGV[0]) or die; chmod 0777, \\*F or die \"fchmod: $!\"' " + target,
			"chown nobody " + target,
			"touch -d 2001-01-01 " + target,
			"touch -h -d 2001-01-01 " + target,
		} {
			runStarted(t, c, p)
			after, err := os.Stat(target)
			if err != nil {
				t.Fatal(err)
			}
			if after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) || owner(after) != owner(before) {
				t.Errorf("%s: %q changed %s: %v %v -> %v %v", kind, p, target, before.Mode(), before.ModTime(), after.Mode(), after.ModTime())
			}
		}
		if out, err, _ := runStarted(t, c, "echo x > f && chmod 741 f && touch -d 2001-01-01 f && stat -c %a f"); err != nil || out != "741\n" {
			t.Errorf("%s: metadata inside the workspace: %v: %q", kind, err, out)
		}
	})
}

func owner(fi os.FileInfo) uint32 { return fi.Sys().(*syscall.Stat_t).Uid }

// Without the network, UDP (and so DNS) is refused; TCP is left to
// Landlock or the network namespace.
func TestSandboxRefusesUDP(t *testing.T) {
	eachSupervised(t, func(t *testing.T, kind string) {
		ws, _ := hostDirs(t)
		c := confined(t, SandboxConfig{WorkspaceRoot: ws, force: kind})
		probe := "perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(Proto => \"udp\", PeerAddr => \"127.0.0.1:9\") or die \"socket: $!\"; $s->send(\"x\") and print \"sent\"'"
		if out, err, _ := runStarted(t, c, probe); err == nil || strings.Contains(out, "sent") {
			t.Errorf("%s: UDP was sent: %q", kind, out)
		}
		open := confined(t, SandboxConfig{WorkspaceRoot: ws, Network: true, force: kind})
		if out, err, _ := runStarted(t, open, probe); err != nil || !strings.Contains(out, "sent") {
			t.Errorf("%s: UDP with the network allowed: %v %q", kind, err, out)
		}
	})
}

// Starting bash must not wait for this process while a garbage
// collection stops the world: the thread that forks holds its P until
// the child has exec'd, and that exec is a notified call (see supervisor).
func TestSupervisedStartSurvivesGC(t *testing.T) {
	eachSupervised(t, func(t *testing.T, kind string) {
		ws, _ := hostDirs(t)
		c := confined(t, SandboxConfig{WorkspaceRoot: ws, ExecDenied: denyRM, ExecDenyNames: []string{"rm"}, force: kind})
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
					runtime.GC()
				}
			}
		}()
		defer func() { close(stop); <-done }()
		for range 30 {
			if out, err, _ := runStarted(t, c, "true"); err != nil {
				t.Fatalf("%s: %v: %s", kind, err, out)
			}
		}
	})
}

// The service's own executable does not run inside the sandbox: a
// process running it is the one exec the proxy answers unchecked.
func TestSandboxRefusesTheServiceBinary(t *testing.T) {
	eachSupervised(t, func(t *testing.T, kind string) {
		ws, _ := hostDirs(t)
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		c := confined(t, SandboxConfig{WorkspaceRoot: ws, ExecDenied: denyRM, ExecDenyNames: []string{"rm"}, force: kind})
		b, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "copy"), b, 0o755); err != nil {
			t.Fatal(err)
		}
		probes := []string{"./copy -test.run=^$"}
		if !strings.HasPrefix(self, "/tmp/") { // bubblewrap's /tmp is its own
			probes = append(probes, self+" -test.run=^$")
		}
		for _, p := range probes {
			out, err, refusals := runStarted(t, c, p)
			if err == nil || len(refusals) == 0 || !strings.Contains(refusals[0], "the service's own executable") {
				t.Errorf("%s: %q: %v %q %q", kind, p, err, out, refusals)
			}
		}
	})
}

// Other tasks' and tools' files in the shared /tmp are neither listed nor
// read; the sandbox's own TMPDIR works.
func TestSandboxHidesSharedTmp(t *testing.T) {
	eachSandbox(t, func(t *testing.T, kind string) {
		ws, _ := hostDirs(t)
		other, err := os.MkdirTemp("", "other-task-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(other) })
		if err := os.WriteFile(filepath.Join(other, "note"), []byte("OTHER-NOTE"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := confined(t, SandboxConfig{WorkspaceRoot: ws, force: kind})
		if out, _, _ := runStarted(t, c, "ls -a /tmp "+os.TempDir()); strings.Contains(out, filepath.Base(other)) {
			t.Errorf("%s: the shared tmp is listed: %q", kind, out)
		}
		if out, _, _ := runStarted(t, c, "cat "+other+"/note; ls "+other); strings.Contains(out, "OTHER-NOTE") || strings.Contains(out, "\nnote") || strings.HasPrefix(out, "note") {
			t.Errorf("%s: another task's tmp is readable: %q", kind, out)
		}
		if out, err, _ := runStarted(t, c, `echo t > "$TMPDIR/t" && ls "$TMPDIR" && cat "$TMPDIR/t"`); err != nil || out != "t\nt\n" {
			t.Errorf("%s: the private tmp: %v: %q", kind, err, out)
		}
	})
}

// When the proxy dies, sandboxed calls fail instead of waiting forever
// for an answer, and nothing runs unchecked.
func TestSupervisorProxyDeathFailsClosed(t *testing.T) {
	viaThread = true
	t.Cleanup(func() { viaThread = false })
	needLandlock(t)
	ws, _ := hostDirs(t)
	c := confined(t, SandboxConfig{WorkspaceRoot: ws, ExecDenied: denyRM, ExecDenyNames: []string{"rm"}, force: SandboxLandlock})
	if out, err, _ := runStarted(t, c, "true"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	c.sup.mu.Lock()
	proxy := c.sup.proxy
	c.sup.mu.Unlock()
	if err := proxy.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 10*time.Second, func() bool {
		c.sup.mu.Lock()
		defer c.sup.mu.Unlock()
		return len(c.sup.listeners) == 0
	}, "the supervisor still holds listeners after its proxy died")
	cmd := exec.Command("bash", "-c", "echo ran")
	cmd.Dir = ws
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := c.Shell().(interface{ StartShell(*exec.Cmd) error }).StartShell(cmd); err == nil {
		cmd.Wait()
	}
	if strings.Contains(out.String(), "ran") {
		t.Errorf("bash ran after the proxy died: %q", out.String())
	}
}

// On a checkout the git guard wraps the sandbox's shell; an exec the
// supervisor refuses is still named in the result.
func TestCheckoutShellReportsExecRefusals(t *testing.T) {
	eachSupervised(t, func(t *testing.T, kind string) {
		ws, _ := hostDirs(t)
		if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
		c := confined(t, SandboxConfig{WorkspaceRoot: ws, ExecDenied: denyRM, ExecDenyNames: []string{"rm"}, force: kind})
		if _, ok := c.Shell().(guardedStarter); !ok {
			t.Fatalf("%s: the shell on a checkout is %T, not the git guard's", kind, c.Shell())
		}
		victim := filepath.Join(ws, "victim")
		if err := os.WriteFile(victim, []byte("v"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _, refusals := runStarted(t, c, "rm victim")
		if _, err := os.Stat(victim); err != nil {
			t.Errorf("%s: rm deleted the file: %s", kind, out)
		}
		if len(refusals) == 0 || !strings.Contains(refusals[0], "refused by deny rule Bash(rm:*) at exec") {
			t.Errorf("%s: refusals = %q", kind, refusals)
		}
	})
}

// A connect to a UNIX socket that does not exist is answered ENOENT by the
// supervisor's proxy itself (every bash start-up asks glibc's nscd socket
// twice); the service sees only the connects it has to decide, and those
// are decided as before.
func TestProxyAnswersMissingSocketsItself(t *testing.T) {
	eachSupervised(t, func(t *testing.T, kind string) {
		ws, outside := hostDirs(t)
		sock := filepath.Join(outside, "d.sock")
		unixHTTP(t, sock)
		c := confined(t, SandboxConfig{WorkspaceRoot: ws, force: kind})
		connect := func(p string) string {
			return `perl -e 'use Socket; socket(S, PF_UNIX, SOCK_STREAM, 0) or die; connect(S, pack_sockaddr_un("` + p + `")) ? print "ok " : print $!+0, " "'`
		}
		before := c.sup.connects.Load()
		out, err, _ := runStarted(t, c, connect(filepath.Join(outside, "missing.sock"))+"; "+connect("no/such.sock"))
		if err != nil || out != "2 2 " {
			t.Fatalf("%s: connects to missing sockets: %v: %q, want ENOENT (2) twice", kind, err, out)
		}
		if n := c.sup.connects.Load() - before; n != 0 {
			t.Errorf("%s: the service was asked about %d connects to missing sockets; the proxy answers them", kind, n)
		}
		out, _, refusals := runStarted(t, c, connect(sock))
		if out != "13 " || len(refusals) != 1 {
			t.Errorf("%s: an outside socket: %q, refusals %q; want EACCES (13) and one refusal", kind, out, refusals)
		}
		if c.sup.connects.Load() == before {
			t.Errorf("%s: an existing outside socket was not decided by the service", kind)
		}
	})
}
