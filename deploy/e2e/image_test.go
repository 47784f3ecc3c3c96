package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"reasonix/internal/eventually"
)

// maxImageBytes is the size budget of the image (issue #14): 200 MB.
const maxImageBytes = 200_000_000

func TestImageIsSmallAndRunsAsAService(t *testing.T) {
	img, _ := images(t)
	var inspect []struct {
		Size   int64
		Config struct {
			User         string
			Entrypoint   []string
			Cmd          []string
			ExposedPorts map[string]any
			Volumes      map[string]any
			StopSignal   string
			Healthcheck  struct{ Test []string }
			Env          []string
		}
	}
	if err := json.Unmarshal([]byte(run(t, "", "docker", "image", "inspect", img)), &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("docker image inspect: %v", err)
	}
	in := inspect[0]
	t.Logf("image %s: %.1f MB", img, float64(in.Size)/1e6)
	if in.Size > maxImageBytes {
		t.Errorf("the image is %d bytes, over the budget of %d", in.Size, maxImageBytes)
	}
	c := in.Config
	if c.User != "reasonix" || c.StopSignal != "SIGTERM" || c.Volumes["/data"] == nil || c.ExposedPorts["8080/tcp"] == nil {
		t.Errorf("config: user %q, stop signal %q, volumes %v, ports %v", c.User, c.StopSignal, c.Volumes, c.ExposedPorts)
	}
	if strings.Join(c.Entrypoint, " ") != "/usr/bin/tini -- reasonix" || strings.Join(c.Cmd, " ") != "serve" {
		t.Errorf("entrypoint %q, cmd %q", c.Entrypoint, c.Cmd)
	}
	if !strings.Contains(strings.Join(c.Healthcheck.Test, " "), "reasonix health") {
		t.Errorf("healthcheck = %q", c.Healthcheck.Test)
	}

	// What tasks need at run time is there, the trimmed git still does
	// what workspaces use (commits, worktrees, https remotes), and the
	// binary is the static one.
	out := run(t, "", "docker", "run", "--rm", "--network", "host", "--entrypoint", "bash", img, "-ec", `
id -un
git --version
bwrap --version
tini --version
reasonix version
stat -c '%U %a' /data
cd /tmp && git init -q -b main r && cd r
git -c user.name=t -c user.email=t@localhost commit -q --allow-empty -m start
git worktree add -q -b reasonix/t1 ../w && git -C ../w rev-parse --abbrev-ref HEAD
test -x "$(git --exec-path)/git-remote-https" && echo https-remote`)
	t.Logf("in the image:\n%s", out)
	want := []string{"reasonix", "git version ", "bubblewrap ", "tini version ", "reasonix ", "reasonix 700", "reasonix/t1", "https-remote"}
	lines := strings.Split(out, "\n")
	if len(lines) != len(want) {
		t.Fatalf("the image lacks something tasks need:\n%s", out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want %q…", i+1, lines[i], w)
		}
	}
}

// The container serves within a second of `docker run`, reports healthy
// through its HEALTHCHECK, and stops cleanly (exit 0) on SIGTERM.
func TestImageStartsServingWithinASecond(t *testing.T) {
	img, _ := images(t)
	const runs = 5
	// starts: from `docker run` to /readyz answering 200; inside: from the
	// container's start (Docker's StartedAt) to serve's "reasonix serving"
	// record, the service's own share.
	var starts, inside, stops []time.Duration
	for i := range runs {
		port := freePort(t)
		name := fmt.Sprintf("reasonix-e2e-start-%d-%d", port, i)
		base := "http://127.0.0.1:" + strconv.Itoa(port)
		args := []string{"run", "-d", "--name", name, "--network", "host", "-e", "REASONIX_ADDR=127.0.0.1:" + strconv.Itoa(port)}
		if i == 0 {
			// The image's own HEALTHCHECK command, checked sooner than its
			// production interval.
			args = append(args, "--health-interval", "500ms", "--health-start-period", "0s")
		}
		start := time.Now()
		run(t, "", "docker", append(args, img)...)
		t.Cleanup(func() { run(t, "", "docker", "rm", "-f", "-v", name) })
		logs := func() string { return run(t, "", "docker", "logs", name) }
		starts = append(starts, waitReady(t, base, start, logs))
		inside = append(inside, startedToServing(t, name, logs()))
		if i == 0 {
			eventually.NoError(t, 30*time.Second, func() error {
				if health := run(t, "", "docker", "inspect", "-f", "{{.State.Health.Status}}", name); health != "healthy" {
					return fmt.Errorf("health = %q\n%s", health, run(t, "", "docker", "inspect", "-f", "{{json .State.Health}}", name))
				}
				return nil
			})
			// An orphan (a background job whose shell exited) is adopted by
			// PID 1 and must be reaped there, not left a zombie.
			zombies := run(t, "", "docker", "exec", name, "bash", "-c",
				`bash -c 'sleep 0.2 & exit'; sleep 1; grep -l '^State:.*zombie' /proc/[0-9]*/status | wc -l`)
			if zombies != "0" {
				t.Errorf("%s zombies in the container after an orphan exited", zombies)
			}
		}
		stop := time.Now()
		run(t, "", "docker", "stop", "--time", "45", name)
		stops = append(stops, time.Since(stop))
		if code := run(t, "", "docker", "inspect", "-f", "{{.State.ExitCode}}", name); code != "0" {
			t.Errorf("exit code after SIGTERM = %s\n%s", code, logs())
		}
		if i == 0 {
			checkJSONLogs(t, logs())
		}
	}
	t.Logf("docker run to /readyz 200: median %v of %d (all %v); container start to serving: median %v (all %v); docker stop: median %v (all %v)",
		median(starts), runs, starts, median(inside), inside, median(stops), stops)
	if m := median(starts); m > time.Second {
		t.Errorf("median start-to-serving %v, over 1s", m)
	}
}

// checkJSONLogs: off a terminal every log line is a JSON record, and the
// service says it is serving and that it stopped.
func checkJSONLogs(t *testing.T, logs string) {
	t.Helper()
	var msgs []string
	for _, line := range strings.Split(logs, "\n") {
		if line == "" || strings.HasPrefix(line, "reasonix ") { // the stdout banner
			continue
		}
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Msg == "" {
			t.Errorf("not a JSON log record: %q", line)
			continue
		}
		msgs = append(msgs, rec.Level+" "+rec.Msg)
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, "reasonix serving") || !strings.Contains(all, "stopped") {
		t.Errorf("log records:\n%s", all)
	}
	t.Logf("log records:\n%s", all)
}

// startedToServing is the time from the container's start to the service's
// "reasonix serving" log record.
func startedToServing(t *testing.T, name, logs string) time.Duration {
	t.Helper()
	started, err := time.Parse(time.RFC3339Nano, run(t, "", "docker", "inspect", "-f", "{{.State.StartedAt}}", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(logs, "\n") {
		var rec struct {
			Time time.Time
			Msg  string
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "reasonix serving" {
			return rec.Time.Sub(started)
		}
	}
	t.Fatalf("no serving record in\n%s", logs)
	return 0
}
