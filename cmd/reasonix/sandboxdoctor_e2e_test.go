package main

import (
	"strings"
	"testing"

	"reasonix/policy"
)

// TestDoctorSaysWhetherPidfdGetfdWorks: where the sandbox is supervised,
// doctor's sandbox line says whether the supervisor can take a caller's
// socket (pidfd_getfd) — without it every connect and send of sandboxed
// bash fails closed, which a person must be able to find out.
func TestDoctorSaysWhetherPidfdGetfdWorks(t *testing.T) {
	e := newE2E(t)
	out, _, _ := e.run("doctor")
	var line string
	for l := range strings.Lines(out) {
		if strings.Contains(l, " sandbox ") {
			line = l
		}
	}
	switch {
	case line == "":
		t.Fatalf("no sandbox line:\n%s", out)
	case strings.Contains(line, "but the seccomp supervisor does not work") || strings.Contains(line, "no OS sandbox"):
		t.Skipf("no supervised sandbox here: %s", line)
	case policy.PidfdGetfdWorks() && !(strings.HasPrefix(line, "ok") && strings.Contains(line, "pidfd_getfd")):
		t.Errorf("pidfd_getfd works here, but the sandbox line is %q", line)
	case !policy.PidfdGetfdWorks() && !(strings.HasPrefix(line, "warn") && strings.Contains(line, "pidfd_getfd is refused")):
		t.Errorf("pidfd_getfd is refused here, but the sandbox line is %q", line)
	}
}
