package policy_test

import (
	"context"
	"testing"

	"reasonix/agent"
	"reasonix/policy"
)

// authorize runs one bash command through a fresh gate.
func authorize(t *testing.T, c policy.GateConfig, cmd string) agent.Verdict {
	t.Helper()
	g, err := policy.NewGate(c)
	if err != nil {
		t.Fatal(err)
	}
	v, err := g.Authorize(context.Background(), agent.Call{Tool: "bash", Args: bashArgs(cmd)})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDenyBypassesOfIssue10 are the three commands that deleted a directory
// under yolo with deny = ["Bash(rm:*)"].
func TestDenyBypassesOfIssue10(t *testing.T) {
	p := mustPolicy(t, policy.Config{Deny: []string{"Bash(rm:*)"}})
	for _, cmd := range []string{"$(echo rm) -rf D", "X=rm; $X -rf D", "find D -delete"} {
		v := authorize(t, policy.GateConfig{Policy: p, Posture: policy.PostureYolo}, cmd)
		if v.Allowed || v.Code != agent.RefusedByRule {
			t.Errorf("%q under yolo: allowed=%v code=%q (%s)", cmd, v.Allowed, v.Code, v.Reason)
		}
	}
}

// TestDenyWinsOverDynamicNames: a command whose name is computed is refused
// in every posture once any Bash deny rule exists, and only then.
func TestDenyWinsOverDynamicNames(t *testing.T) {
	dynamic := []string{
		"$X -rf D", "$(echo rm) -rf D", "`echo rm` -rf D", "\"$X\" D", "${X:-rm} D", "eval \"$CMD\"", "eval $(cat f)",
		"timeout 5 $X D", "env $X D", "nice $(echo rm) D", "sudo $X", "bash -c \"$X\"", "sh -c \"$(cat f)\"",
		"echo rm -rf D | sh", "cat script | bash", "bash -s < x", "ls | xargs -I{} {} -rf", "ls | xargs $X",
		"find . -exec $X {} ;", "find . -exec {} ;", "busybox $X D", "echo x; $X D", "echo $($X D)",
		"echo 'unterminated", "parallel ::: 'rm -rf D'",
		"let 'a[$(rm -rf D)]=1'", "x='a[$(rm -rf D)]'; echo $((x))", "[ -v 'a[$(rm -rf D)]' ]",
		"printf -v 'a[`rm -rf D`]' x", "read 'a[$(rm -rf D)]' < f",
	}
	withDeny := mustPolicy(t, policy.Config{Mode: "allow", Deny: []string{"Bash(rm:*)"}, AllowDynamicBash: true})
	noDeny := mustPolicy(t, policy.Config{Mode: "allow", Deny: []string{"Edit(secrets/**)"}})
	for _, cmd := range dynamic {
		for _, posture := range []policy.Posture{policy.PostureAsk, policy.PostureAuto, policy.PostureYolo} {
			v := authorize(t, policy.GateConfig{Policy: withDeny, Posture: posture, ShellSandboxed: true}, cmd)
			if v.Allowed || v.Code != agent.RefusedByRule {
				t.Errorf("%q (%s): allowed=%v code=%q (%s)", cmd, posture, v.Allowed, v.Code, v.Reason)
			}
		}
		if ev := noDeny.Evaluate(policy.Query{Tool: "bash", Args: bashArgs(cmd)}); ev.Decision == policy.Deny {
			t.Errorf("%q denied without any Bash deny rule: %s", cmd, ev.Reason)
		}
	}
	// A computed word where a deny rule names one may be that word.
	push := mustPolicy(t, policy.Config{Mode: "allow", Deny: []string{"Bash(git push:*)", "Bash(rm -rf*)"}})
	for _, cmd := range []string{"git $SUB origin", "git $(echo push)", "/usr/bin/git \"$X\" -f", "timeout 5 git $S", "rm $FLAGS /", "rm -r$F x"} {
		if d := push.Decide("bash", false, bashArgs(cmd)); d != policy.Deny {
			t.Errorf("%q with Bash(git push:*): %v", cmd, d)
		}
	}
	for _, cmd := range []string{"git log $REV", "git status", "rm x $F", "git pull $R"} {
		if d := push.Decide("bash", false, bashArgs(cmd)); d == policy.Deny {
			t.Errorf("%q denied by Bash(git push:*)", cmd)
		}
	}
	ask := mustPolicy(t, policy.Config{Mode: "allow", Ask: []string{"Bash(git push:*)"}})
	if d := ask.Decide("bash", false, bashArgs("git $SUB")); d != policy.Ask {
		t.Errorf("git $SUB with an ask rule: %v", d)
	}
	// Literal commands, and computed arguments of a literal command, are
	// judged by the rules as before.
	for _, cmd := range []string{"ls $DIR", "echo $(date)", "grep -r \"$PAT\" .", "xargs -n1 echo", "let i=i+1", "echo '$(not code)'", "find . -exec grep x {} +"} {
		if ev := withDeny.Evaluate(policy.Query{Tool: "bash", Args: bashArgs(cmd)}); ev.Decision == policy.Deny {
			t.Errorf("%q denied: %s", cmd, ev.Reason)
		}
	}
}

// TestDenyRmSeesThroughWrappers: every way of running rm that the analyser
// can read is matched by Bash(rm:*), in every posture.
func TestDenyRmSeesThroughWrappers(t *testing.T) {
	p := mustPolicy(t, policy.Config{Mode: "allow", Deny: []string{"Bash(rm:*)"}, AllowDynamicBash: true})
	for _, cmd := range []string{
		"rm -rf D", "/bin/rm D", "\\rm D", "'rm' D", "find D -delete", "find D -name '*.o' -delete", "find -L D -delete",
		"find D -exec rm {} \\;", "find D -exec rm -rf {} +", "find D -execdir rm {} \\;", "find D -ok rm {} \\;",
		"ls | xargs rm", "ls | xargs -0 -n1 rm -f", "busybox rm D", "env rm D", "env -i FOO=1 rm D", "sh -c 'rm -rf D'",
		"bash -lc 'cd x && rm D'", "timeout 5 rm D", "timeout -s KILL 5 rm D", "nice rm D", "nice -n 5 rm D", "nohup rm D",
		"command rm D", "time rm D", "time -p rm D", "stdbuf -o0 rm D", "ionice -c 3 rm D", "sudo rm D", "eval rm D",
		"eval 'rm -rf D'", "watch rm D", "su -c 'rm D' bob", "trap 'rm -rf D' EXIT", "strace -f rm D", "chroot / rm D",
		"echo $(rm D)", "f() { rm D; }; f", "x && (rm D)",
	} {
		for _, posture := range []policy.Posture{policy.PostureAsk, policy.PostureYolo} {
			v := authorize(t, policy.GateConfig{Policy: p, Posture: posture, ShellSandboxed: true}, cmd)
			if v.Allowed || v.Code != agent.RefusedByRule {
				t.Errorf("%q (%s): allowed=%v code=%q (%s)", cmd, posture, v.Allowed, v.Code, v.Reason)
			}
		}
	}
	// find -delete is also what narrower rm rules describe.
	for _, rule := range []string{"Bash(rm -rf:*)", "Bash(rm -r:*)", "Bash(rm -fr:*)"} {
		p := mustPolicy(t, policy.Config{Mode: "allow", Deny: []string{rule}})
		if d := p.Decide("bash", false, bashArgs("find build -delete")); d != policy.Deny {
			t.Errorf("find -delete with %s: %v", rule, d)
		}
	}
}
