package deploy

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"reasonix/internal/testenv"
)

// confined runs bwrap the way the bash sandbox does (policy/bwrap.go), as
// an unprivileged user under some of what the systemd unit imposes,
// emulated in a private mount namespace: no-new-privileges and no
// capabilities (setpriv), plus the mounts in setup. It returns bwrap's
// output.
func confined(t *testing.T, setup string) string {
	t.Helper()
	script := setup + `
exec setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs --bounding-set=-all -- \
	bwrap --die-with-parent --new-session --unshare-pid --unshare-ipc --unshare-uts --unshare-net --unshare-user \
	--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp -- sh -c 'echo sandboxed'
`
	out, _ := exec.Command("unshare", "--mount", "--propagation", "private", "bash", "-ec", script).CombinedOutput()
	return strings.TrimSpace(string(out))
}

// The unit's confinement keeps bubblewrap working, and the directives it
// leaves out would not: systemd has no PID 1 here to run the unit for
// real, so its mounts are emulated (ProtectSystem=strict remounts / read-only,
// PrivateTmp mounts a private /tmp, ProtectControlGroups makes cgroups
// read-only; ProtectKernelTunables and ProtectKernelLogs mount over parts
// of /proc).
func TestBwrapWorksUnderTheUnitsConfinement(t *testing.T) {
	testenv.LookPath(t, "bwrap")
	for _, tool := range []string{"unshare", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is missing: %v", tool, err)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("emulating the unit's mounts needs root (a private mount namespace)")
	}
	if out := confined(t, ""); out != "sandboxed" {
		t.Skipf("bwrap cannot start a sandbox here at all: %s", out)
	}
	kept := `mount -o remount,bind,ro /
mount -t tmpfs tmpfs /tmp
mount -o remount,bind,ro /sys/fs/cgroup || true`
	if out := confined(t, kept); out != "sandboxed" {
		t.Errorf("bwrap under NoNewPrivileges, no capabilities, ProtectSystem=strict, PrivateTmp, ProtectControlGroups: %s", out)
	}
	for directive, mount := range map[string]string{
		"ProtectKernelTunables": "mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys",
		"ProtectKernelLogs":     "mount --bind /dev/null /proc/kmsg",
	} {
		if out := confined(t, mount); out == "sandboxed" {
			t.Errorf("bwrap works under %s after all; the unit could have it", directive)
		}
	}
	unit := readFile(t, "systemd/reasonix.service")
	for _, d := range []string{"\nProtectKernelTunables=yes", "\nProtectKernelLogs=yes", "\nRestrictNamespaces=", "\nPrivateUsers="} {
		if strings.Contains(unit, d) {
			t.Errorf("the unit sets %s, which stops bubblewrap", strings.TrimSpace(d))
		}
	}
}
