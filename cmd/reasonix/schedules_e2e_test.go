package main

import (
	"regexp"
	"strings"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner/store/storetest"
)

// TestSchedulesCLI drives schedules through the built binary: an @every 1s
// schedule fires on its own, list shows next run, last run and outcome,
// and a pause made through the CLI holds across a restart of serve.
func TestSchedulesCLI(t *testing.T) {
	e := newE2E(t, byPrompt(map[string]func(agenttest.Request) agenttest.Turn{
		"scheduled chores": func(agenttest.Request) agenttest.Turn { return answer("chores done") },
	})...)
	e.configure(`
[[schedules]]
name = "chores"
cron = "@every 1s"
prompt = "scheduled chores"

[[schedules]]
name = "nightly"
cron = "30 2 * * *"
timezone = "Europe/Berlin"
prompt = "scheduled chores, the nightly ones"
`)
	s := e.serve(t)
	e.extra = append(e.extra, "REASONIX_API_TOKEN="+s.token)
	list := func(s *service) string {
		out, stderr, code := e.run("schedules", "list", "--server", s.url)
		if code != 0 {
			t.Fatalf("schedules list: exit %d: %s", code, stderr)
		}
		return out
	}
	row := func(out, name string) string {
		for line := range strings.SplitSeq(out, "\n") {
			if strings.HasPrefix(line, name+" ") {
				return line
			}
		}
		t.Fatalf("no row for %s in\n%s", name, out)
		return ""
	}
	s.waitFor(func() bool { return strings.Contains(row(list(s), "chores"), "succeeded") }, "a scheduled run to succeed")
	out := list(s)
	if !strings.Contains(out, "NEXT RUN") || !strings.Contains(out, "LAST RUN") || !strings.Contains(out, "OUTCOME") {
		t.Errorf("list header:\n%s", out)
	}
	nightly := row(out, "nightly")
	for _, want := range []string{"30 2 * * *", "Europe/Berlin", "02:30:00 CE", "ok"} {
		if !strings.Contains(nightly, want) {
			t.Errorf("nightly row lacks %q: %q", want, nightly)
		}
	}

	if out, stderr, code := e.run("schedules", "pause", "--server", s.url, "chores"); code != 0 || !strings.Contains(out, "schedule chores: paused") {
		t.Fatalf("pause: exit %d: %s%s", code, out, stderr)
	}
	if _, stderr, code := e.run("schedules", "pause", "--server", s.url, "weekly"); code == 0 || !strings.Contains(stderr, "schedule weekly not found") {
		t.Errorf("pause of an unknown schedule: exit %d: %s", code, stderr)
	}
	s.cmd.Process.Kill()
	<-s.done

	s2 := e.serve(t)
	if r := row(list(s2), "chores"); !strings.Contains(r, "paused") {
		t.Errorf("after a restart chores is %q, want paused", r)
	}
	out, stderr, code := e.run("schedules", "run", "--server", s2.url, "--wait", "nightly")
	if code != 0 || !strings.Contains(out, "started task t_") || !strings.Contains(out, "chores done") {
		t.Fatalf("run --wait: exit %d:\n%s%s", code, out, stderr)
	}
	if r := row(list(s2), "nightly"); !strings.Contains(r, "succeeded") {
		t.Errorf("nightly after a manual run: %q", r)
	}
	if out, _, code := e.run("schedules", "resume", "--server", s2.url, "chores"); code != 0 || !strings.Contains(out, "active, next run") {
		t.Errorf("resume: exit %d: %s", code, out)
	}
}

// TestServeRefusesAnImpossibleSchedule: a spec that never fires is a config
// error naming the schedule, for config check and serve alike.
func TestServeRefusesAnImpossibleSchedule(t *testing.T) {
	e := newE2E(t)
	e.configure(`
[[schedules]]
name = "feb30"
cron = "0 0 30 2 *"
prompt = "never"
`)
	for _, args := range [][]string{{"config", "check"}, {"serve", "--addr", "127.0.0.1:0"}} {
		_, stderr, code := e.run(args...)
		if code != 2 || !strings.Contains(stderr, "schedules[feb30].cron") || !strings.Contains(stderr, "never fires") {
			t.Errorf("%s: exit %d: %s", args[0], code, stderr)
		}
	}
}

// TestServeTwoNodesFireEachOccurrenceOnce: two `reasonix serve` processes
// on one Postgres database run an @every 1s schedule; no occurrence runs
// twice, whichever node's loop saw it first.
func TestServeTwoNodesFireEachOccurrenceOnce(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	turns := goalScript(200, func(agenttest.Request) agenttest.Turn { return answer("tick done") })
	a := newE2E(t, turns...)
	b := &e2e{t: t, home: t.TempDir(), work: t.TempDir(), srv: a.srv}
	for _, e := range []*e2e{a, b} {
		e.configure(`
[store]
driver = "postgres"
dsn_env = "RX_TEST_DSN"

[[schedules]]
name = "tick"
cron = "@every 1s"
prompt = "scheduled tick"
`)
	}
	na := a.serve(t, "RX_TEST_DSN="+dsn)
	nb := b.serve(t, "RX_TEST_DSN="+dsn)
	var page struct{ Tasks []task }
	na.waitFor(func() bool {
		na.call("GET", "/api/v1/tasks?source=cron", nil, &page)
		return len(page.Tasks) >= 6
	}, "six scheduled runs")
	seen := map[string]string{}
	occurrence := regexp.MustCompile(`"type":"schedule","payload":\{[^}]*"occurrence":"([^"]+)"`)
	for _, tk := range page.Tasks {
		if tk.Requester != "schedule:tick" {
			t.Errorf("task %s requester %q", tk.ID, tk.Requester)
		}
		// The schedule event follows the task's creation: the newest task
		// may not have it yet.
		var m []string
		nb.waitFor(func() bool {
			m = occurrence.FindStringSubmatch(nb.events(tk.ID))
			return m != nil
		}, "the schedule event of task "+tk.ID)
		if other, dup := seen[m[1]]; dup {
			t.Errorf("occurrence %s ran twice: tasks %s and %s", m[1], other, tk.ID)
		}
		seen[m[1]] = tk.ID
	}
}
