package e2e

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/internal/eventually"
)

// bootSystemd starts img (deploy/e2e/systemd: systemd as PID 1 with the
// unit installed) on the host's network and waits until its systemd has
// finished booting; the container is removed when the test ends.
//
// systemd needs its cgroup hierarchies writable and the host's cgroup
// namespace, so it sees the hierarchy it was placed in. --privileged
// would grant that, but asks for every capability, and runc refuses
// ("unable to apply caps: operation not permitted") when the host itself
// lacks one (CI containers often lack CAP_SYS_RESOURCE): hence every
// capability but that one, and no seccomp or AppArmor profile.
func bootSystemd(t *testing.T, img, name string) {
	t.Helper()
	run(t, "", "docker", "run", "-d", "--name", name, "--network", "host",
		"--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE",
		"--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
		"--cgroupns", "host", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
		"--tmpfs", "/run", "--tmpfs", "/run/lock", img)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the container's journal:\n%s", tryExec(name, "journalctl --no-pager -n 200; systemctl --failed --no-pager"))
		}
		run(t, "", "docker", "rm", "-f", "-v", name)
	})
	start := time.Now()
	state := ""
	eventually.NoError(t, 60*time.Second, func() error {
		// Before PID 1 opens its socket this fails; --wait then blocks
		// until the boot job is done.
		state = strings.TrimSpace(tryExec(name, "systemctl is-system-running --wait || true"))
		if state != "running" && state != "degraded" {
			return fmt.Errorf("systemd is %q", state)
		}
		return nil
	})
	if state != "running" {
		t.Errorf("systemd booted %s:\n%s", state, tryExec(name, "systemctl --failed --no-pager"))
	}
	t.Logf("systemd up in the container in %v", time.Since(start).Round(time.Millisecond))
}

// tryExec runs a bash script in the container and returns its combined
// output, error included: for diagnostics and polling.
func tryExec(name, script string) string {
	out, err := exec.Command("docker", "exec", name, "bash", "-ec", script).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s\n(%v)", out, err)
	}
	return strings.TrimSpace(string(out))
}

// timedIn runs a command in the container and returns how long it took
// there, without docker exec's own overhead.
func timedIn(t *testing.T, name, command string) time.Duration {
	t.Helper()
	out := run(t, "", "docker", "exec", name, "bash", "-ec",
		`s=$(date +%s%N); `+command+`; e=$(date +%s%N); echo $(( (e - s) / 1000 ))`)
	us, err := strconv.Atoi(out[strings.LastIndex(out, "\n")+1:])
	if err != nil {
		t.Fatalf("%s: %q", command, out)
	}
	return time.Duration(us) * time.Microsecond
}

// properties returns `systemctl show reasonix` as a map.
func properties(t *testing.T, name string, props ...string) map[string]string {
	t.Helper()
	args := []string{"exec", name, "systemctl", "show", "reasonix"}
	for _, p := range props {
		args = append(args, "-p", p)
	}
	m := map[string]string{}
	for _, line := range strings.Split(run(t, "", "docker", args...), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// headerInstallLine is the last command of the unit's install recipe (its
// header comment): the one that needs a running systemd.
func headerInstallLine(t *testing.T) string {
	t.Helper()
	unit, err := os.ReadFile("../systemd/reasonix.service")
	if err != nil {
		t.Fatal(err)
	}
	last := ""
	for _, line := range strings.Split(string(unit), "\n") {
		if cmd, ok := strings.CutPrefix(line, "#   "); ok {
			last = cmd
		}
	}
	if !strings.Contains(last, "systemctl") || !strings.Contains(last, "reasonix") {
		t.Fatalf("the unit's header ends with %q, not the systemctl line that starts it", last)
	}
	return last
}

// deploy/systemd/reasonix.service under a real systemd (PID 1 of a
// container on the host's network), installed as its header says:
// `systemctl start` returns once the API answers (Type=notify), the
// sandboxing directives are in force on the running process, a task's
// bash step runs in the OS sandbox under that confinement (Landlock where
// the kernel has it, and bubblewrap when a drop-in takes Landlock away),
// and `systemctl stop` ends it cleanly, well within TimeoutStopSec.
func TestSystemdUnitRunsUnderSystemd(t *testing.T) {
	img := os.Getenv("REASONIX_DEPLOY_SYSTEMD_IMAGE")
	if img == "" {
		t.Skip("REASONIX_DEPLOY_SYSTEMD_IMAGE is not set: `make deploy-test` builds the systemd fixture and runs this test")
	}
	script := func(req agenttest.Request) agenttest.Turn {
		if res := lastToolResult(req); res != "" {
			return agenttest.Turn{Text: "done: " + strings.TrimSpace(res)}
		}
		return agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash",
			Arguments: `{"command":"id -un > out.txt && cat out.txt"}`}}}
	}
	turns := make([]agenttest.Turn, 8)
	for i := range turns {
		turns[i] = agenttest.Respond(script)
	}
	model := agenttest.NewServer(t, turns...)

	port := freePort(t)
	name := fmt.Sprintf("reasonix-e2e-systemd-%d", port)
	bootSystemd(t, img, name)

	// The env file the header installed, with the test's port, plus the
	// compose stack's config (the model and the API token by variable).
	token := fmt.Sprintf("rxt_e2e_%d", time.Now().UnixNano())
	run(t, "", "docker", "cp", "../compose/reasonix.toml", name+":/etc/reasonix/reasonix.toml")
	run(t, "", "docker", "exec", name, "bash", "-ec", fmt.Sprintf(`
chown root:root /etc/reasonix/reasonix.toml && chmod 0644 /etc/reasonix/reasonix.toml
grep -q '^REASONIX_ADDR=' /etc/reasonix/reasonix.env
sed -i 's|^REASONIX_ADDR=.*|REASONIX_ADDR=127.0.0.1:%d|' /etc/reasonix/reasonix.env
printf '%%s\n' REASONIX_CONFIG=/etc/reasonix/reasonix.toml REASONIX_API_TOKEN=%s \
	REASONIX_MODEL_API_KEY=sk-e2e REASONIX_MODEL_BASE_URL=%s >> /etc/reasonix/reasonix.env`, port, token, model.URL))
	svc := api{t: t, base: "http://127.0.0.1:" + strconv.Itoa(port), token: token}
	journal := func(invocation string) func() string {
		return func() string {
			return tryExec(name, "journalctl --no-pager -o cat _SYSTEMD_INVOCATION_ID="+invocation)
		}
	}

	var starts, stops []time.Duration
	for _, c := range []struct {
		how     string // what starts the unit
		dropIn  string // a drop-in added first, "" for none
		sandbox string // the sandbox bash must run in, "" for any
	}{
		{how: headerInstallLine(t)},
		// The drop-in's seccomp filter makes Landlock unusable, so the
		// service falls back to bubblewrap: bwrap itself runs under the
		// unit's user, no-new-privileges, empty capability set and mounts.
		{how: "systemctl start reasonix", sandbox: "bwrap", dropIn: noLandlock},
	} {
		if c.dropIn != "" {
			setDropIn(t, name, c.dropIn)
		}
		took := timedIn(t, name, c.how)
		// Type=notify: the start job ends on READY=1, sent once serve
		// listens, so the API answers the moment systemctl returns.
		if code := status(svc.base + "/readyz"); code != 200 {
			t.Fatalf("/readyz answered %d right after %q returned\n%s", code, c.how, tryExec(name, "systemctl status --no-pager reasonix"))
		}
		starts = append(starts, took)
		invocation := properties(t, name, "InvocationID")["InvocationID"]
		logs := journal(invocation)
		checkConfinement(t, name)

		kind := ""
		for _, line := range strings.Split(logs(), "\n") {
			if strings.Contains(line, `"msg":"bash is sandboxed"`) {
				_, kind, _ = strings.Cut(line, `"sandbox":"`)
				kind, _, _ = strings.Cut(kind, `"`)
			}
		}
		if kind == "" || c.sandbox != "" && kind != c.sandbox {
			t.Errorf("bash sandbox under the unit = %q, want %q:\n%s", kind, cmp.Or(c.sandbox, "any"), logs())
		}
		t.Logf("started by %q in %v; bash sandbox: %s", c.how, took, kind)

		id := svc.submit("a bash step under systemd, sandbox " + kind)
		if got := svc.finish(id, logs); got.State != "succeeded" || got.Result == nil || !strings.HasPrefix(got.Result.FinalAnswer, "done: reasonix") {
			t.Errorf("task under systemd (%s): %+v %+v\n%s", kind, got, got.Result, logs())
		}

		took = timedIn(t, name, "systemctl stop reasonix")
		stops = append(stops, took)
		p := properties(t, name, "ActiveState", "Result", "ExecMainStatus", "TimeoutStopUSec")
		if p["ActiveState"] != "inactive" || p["Result"] != "success" || p["ExecMainStatus"] != "0" {
			t.Errorf("after systemctl stop: %v\n%s", p, logs())
		}
		if limit, err := time.ParseDuration(p["TimeoutStopUSec"]); err != nil || took > limit/4 {
			t.Errorf("systemctl stop took %v, TimeoutStopSec %q", took, p["TimeoutStopUSec"])
		}
		// serve's own records say it stopped (not killed); journald may
		// take a moment to write the last lines of the stream.
		eventually.True(t, 5*time.Second, func() bool { return strings.Contains(logs(), "stopped") },
			"no stop record in the journal:\n%s", logs())
		checkJSONLogs(t, logs())
	}
	t.Logf("systemctl start until ready: %v; systemctl stop: %v", starts, stops)

	// What the unit leaves out would take bubblewrap away: with any of these
	// (and Landlock gone too) serve finds no sandbox at all. This is the
	// unit's header comment, checked under systemd rather than emulated.
	// (PrivateUsers=yes, which the comment also names, is not here: under
	// systemd 252 on the 6.18 kernel this was written on, bwrap still
	// started with it.)
	for _, directive := range []string{"ProtectKernelTunables=yes", "ProtectKernelLogs=yes", "RestrictNamespaces=yes"} {
		setDropIn(t, name, noLandlock+directive+"\n")
		run(t, "", "docker", "exec", name, "systemctl", "start", "reasonix")
		logs := journal(properties(t, name, "InvocationID")["InvocationID"])
		if out := logs(); strings.Contains(out, "bash is sandboxed") || !strings.Contains(out, "no OS sandbox works here") {
			t.Errorf("with %s bubblewrap still works, or serve did not say:\n%s", directive, out)
		}
		run(t, "", "docker", "exec", name, "systemctl", "stop", "reasonix")
	}
}

// noLandlock is a drop-in that takes Landlock from the service (its system
// calls fail with ENOSYS, as on a kernel without it).
const noLandlock = "[Service]\n" +
	"SystemCallFilter=~landlock_create_ruleset landlock_add_rule landlock_restrict_self\n" +
	"SystemCallErrorNumber=ENOSYS\n"

// setDropIn makes body the unit's only drop-in and reloads systemd.
func setDropIn(t *testing.T, name, body string) {
	t.Helper()
	cmd := exec.Command("docker", "exec", "-i", name, "bash", "-ec", `
mkdir -p /etc/systemd/system/reasonix.service.d
cat > /etc/systemd/system/reasonix.service.d/e2e.conf
systemctl daemon-reload`)
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("drop-in %q: %v\n%s", body, err, out)
	}
}

// checkConfinement checks the unit's directives on the running service:
// as systemd reports them, and as the kernel applies them to serve.
func checkConfinement(t *testing.T, name string) {
	t.Helper()
	want := map[string]string{
		"Type": "notify", "User": "reasonix", "NoNewPrivileges": "yes", "ProtectSystem": "strict",
		"ProtectHome": "read-only", "PrivateTmp": "yes", "PrivateDevices": "yes", "CapabilityBoundingSet": "",
		"ProtectKernelModules": "yes", "ProtectControlGroups": "yes", "ProtectClock": "yes",
		"RestrictSUIDSGID": "yes", "RestrictRealtime": "yes", "LockPersonality": "yes",
		"StateDirectory": "reasonix", "StateDirectoryMode": "0700", "UMask": "0077", "KillMode": "mixed",
	}
	var props []string
	for k := range want {
		props = append(props, k)
	}
	got := properties(t, name, append(props, "MainPID")...)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("systemctl show reasonix: %s=%q, want %q", k, got[k], v)
		}
	}
	// What the kernel enforces on serve: its credentials, and its mount
	// namespace (/ read-only, the state directory writable, a private
	// /tmp). ProtectHome= adds no mount of its own under ProtectSystem=strict,
	// which makes /home read-only already.
	out := run(t, "", "docker", "exec", name, "bash", "-ec", `
pid=`+got["MainPID"]+`
stat -c '%U %a' /var/lib/reasonix
grep -E '^(NoNewPrivs|CapEff|CapBnd|Seccomp):' /proc/$pid/status | tr -s '\t ' ' '
id -un "$(awk '/^Uid:/ {print $2}' /proc/$pid/status)"
awk '$5 == "/" || $5 == "/var/lib/reasonix" || $5 == "/tmp" {split($6, o, ","); print $5, o[1]}' /proc/$pid/mountinfo | sort -u`)
	lines := strings.Split(out, "\n")
	for _, w := range []string{"reasonix 700", "NoNewPrivs: 1", "CapEff: 0000000000000000", "CapBnd: 0000000000000000",
		"Seccomp: 2", "reasonix", "/ ro", "/var/lib/reasonix rw", "/tmp rw"} {
		if !slices.Contains(lines, w) {
			t.Errorf("the running service lacks %q:\n%s", w, out)
		}
	}
}
