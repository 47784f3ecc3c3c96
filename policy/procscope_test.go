package policy

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSandboxCannotReadTheServiceProcess: what the kernel shows of the
// service under /proc — its environment, memory, mappings, open files and
// root — stays closed to a sandboxed command. This test binary plays the
// service, which makes itself not dumpable after start-up (secretenv), and
// bash starts from it. Under Landlock the sandbox holds no CAP_SYS_PTRACE
// (dropTracing), which the kernel's ptrace access check then demands;
// bubblewrap's own PID namespace and /proc do not show the service at all.
// /proc/<pid>/cmdline stays readable under Landlock (it is not
// ptrace-guarded); the service's argv carries no secret.
func TestSandboxCannotReadTheServiceProcess(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0) })
	pid := strconv.Itoa(os.Getpid())
	scripts := []string{
		"cat /proc/" + pid + "/environ",
		"cat /proc/" + pid + "/task/" + pid + "/environ",
		"cat /proc/" + pid + "/maps",
		"dd if=/proc/" + pid + "/mem of=/dev/null bs=1 count=1 skip=$((0x400000))",
		"readlink /proc/" + pid + "/fd/0",
		"readlink /proc/" + pid + "/exe",
		"ls /proc/" + pid + "/root/",
	}
	eachSandbox(t, func(t *testing.T, kind string) {
		c := confined(t, SandboxConfig{WorkspaceRoot: t.TempDir(), force: kind})
		for _, s := range scripts {
			out, err := runSandboxed(t, c, s+" && echo READ-OK")
			if err == nil || strings.Contains(out, "READ-OK") {
				t.Errorf("%s: %q read the service's /proc entry: %.200q", kind, s, out)
			}
		}
		// A command may still look at itself: tools rely on /proc/self.
		if out, err := runSandboxed(t, c, "cat /proc/self/environ >/dev/null && readlink /proc/self/exe"); err != nil {
			t.Errorf("%s: a command cannot read its own /proc entry: %v: %s", kind, err, out)
		}
	})
}
