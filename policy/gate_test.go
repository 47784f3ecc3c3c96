package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"reasonix/agent"
	"reasonix/policy"
	"reasonix/policy/policytest"
)

func bashArgs(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return b
}

func mustPolicy(t testing.TB, c policy.Config) *policy.Policy {
	t.Helper()
	p, err := policy.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func fileArgs(path string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"path": path, "content": "x"})
	return b
}

// TestDecisionMatrix walks posture × rule kind × read-only × dynamic and
// nested shell, with nobody to ask (the headless case) and bash sandboxed;
// TestAutoWithoutSandbox covers bash without one.
func TestDecisionMatrix(t *testing.T) {
	const (
		ok   = ""
		rule = agent.RefusedByRule
		un   = agent.RefusedUnattended
	)
	cases := []struct {
		name string
		cfg  policy.Config
		tool string
		ro   bool
		args json.RawMessage
		want [3]string // ask, auto, yolo
	}{
		{"reader fallback", policy.Config{}, "read_file", true, fileArgs("a.go"), [3]string{ok, ok, ok}},
		{"writer fallback", policy.Config{}, "write_file", false, fileArgs("a.go"), [3]string{un, ok, ok}},
		{"writer allow rule", policy.Config{Allow: []string{"Edit(**)"}}, "write_file", false, fileArgs("a.go"), [3]string{ok, ok, ok}},
		{"writer deny rule", policy.Config{Allow: []string{"Edit"}, Deny: []string{"Edit(secrets/**)"}}, "edit_file", false, fileArgs("secrets/k"), [3]string{rule, rule, rule}},
		{"writer explicit ask", policy.Config{Allow: []string{"Edit"}, Ask: []string{"Edit(*.lock)"}}, "write_file", false, fileArgs("go.lock"), [3]string{un, un, ok}},
		{"reader explicit ask", policy.Config{Ask: []string{"Read(/etc/**)"}}, "read_file", true, fileArgs("/etc/shadow"), [3]string{un, un, ok}},
		{"reader deny", policy.Config{Deny: []string{"Read(/etc/**)"}}, "grep", true, fileArgs("/etc"), [3]string{rule, rule, rule}},
		{"image reader deny", policy.Config{Deny: []string{"Read(secret/**)"}}, "view_image", true, fileArgs("secret/logo.png"), [3]string{rule, rule, rule}},
		{"mode deny writer", policy.Config{Mode: "deny"}, "write_file", false, fileArgs("a"), [3]string{rule, rule, rule}},
		{"mode allow writer", policy.Config{Mode: "allow"}, "write_file", false, fileArgs("a"), [3]string{ok, ok, ok}},
		{"mcp writer fallback (installation authorizes)", policy.Config{}, "mcp__gh__create_pr", false, json.RawMessage(`{}`), [3]string{ok, ok, ok}},
		{"mcp ask rule", policy.Config{Ask: []string{"mcp__gh__create_pr"}}, "mcp__gh__create_pr", false, json.RawMessage(`{}`), [3]string{un, un, ok}},
		{"mcp bare allow", policy.Config{Allow: []string{"mcp__gh__create_pr"}}, "mcp__gh__create_pr", false, nil, [3]string{ok, ok, ok}},
		{"bash reader", policy.Config{}, "bash", false, bashArgs("git status && git log -3 | head"), [3]string{ok, ok, ok}},
		{"bash writer", policy.Config{}, "bash", false, bashArgs("go build ./..."), [3]string{un, ok, ok}},
		{"bash prefix allow", policy.Config{Allow: []string{"Bash(go test:*)"}}, "bash", false, bashArgs("go test ./..."), [3]string{ok, ok, ok}},
		{"bash dynamic", policy.Config{Allow: []string{"Bash(go test:*)"}}, "bash", false, bashArgs("go test $PKG"), [3]string{un, ok, ok}},
		{"bash dynamic exact", policy.Config{Allow: []string{"Bash=go test $PKG"}}, "bash", false, bashArgs("go test $PKG"), [3]string{ok, ok, ok}},
		{"bash nested", policy.Config{Allow: []string{"Bash(bash:*)"}}, "bash", false, bashArgs("bash -c 'go test'"), [3]string{un, un, ok}},
		{"bash nested exact", policy.Config{Allow: []string{"Bash=bash -c 'go test'"}}, "bash", false, bashArgs("bash -c 'go test'"), [3]string{ok, ok, ok}},
		{"bash nested deny inside", policy.Config{Deny: []string{"Bash(rm:*)"}}, "bash", false, bashArgs("bash -c 'rm -rf x'"), [3]string{rule, rule, rule}},
		{"bash nested mode allow", policy.Config{Mode: "allow"}, "bash", false, bashArgs("eval ls"), [3]string{un, un, ok}},
		{"bash nested opt-in", policy.Config{AllowDynamicBash: true}, "bash", false, bashArgs("eval ls"), [3]string{un, ok, ok}},
		{"bash nested opt-in mode allow", policy.Config{Mode: "allow", AllowDynamicBash: true}, "bash", false, bashArgs("eval ls"), [3]string{ok, ok, ok}},
		{"bash explicit ask", policy.Config{Allow: []string{"Bash"}, Ask: []string{"Bash(git push:*)"}}, "bash", false, bashArgs("git push"), [3]string{un, un, ok}},
		{"bash deny wrapped", policy.Config{Allow: []string{"Bash"}, Deny: []string{"Bash(git push:*)"}}, "bash", false, bashArgs("timeout 5 /usr/bin/git push"), [3]string{rule, rule, rule}},
		{"bash deny in substitution", policy.Config{Deny: []string{"Bash(rm:*)"}}, "bash", false, bashArgs("echo $(rm -rf x)"), [3]string{rule, rule, rule}},
		{"bash deny via xargs", policy.Config{Deny: []string{"Bash(rm:*)"}}, "bash", false, bashArgs("ls | xargs -n1 rm"), [3]string{rule, rule, rule}},
		{"bash parse failure", policy.Config{}, "bash", false, bashArgs("echo 'unterminated"), [3]string{un, un, ok}},
	}
	for _, c := range cases {
		p := mustPolicy(t, c.cfg)
		for i, posture := range []policy.Posture{policy.PostureAsk, policy.PostureAuto, policy.PostureYolo} {
			g, err := policy.NewGate(policy.GateConfig{Policy: p, Posture: posture, ShellSandboxed: true})
			if err != nil {
				t.Fatal(err)
			}
			v, err := g.Authorize(context.Background(), agent.Call{Tool: c.tool, ReadOnly: c.ro, Args: c.args})
			if err != nil {
				t.Fatalf("%s/%s: %v", c.name, posture, err)
			}
			if v.Code != c.want[i] || v.Allowed != (c.want[i] == ok) {
				t.Errorf("%s/%s: got allowed=%v code=%q (%s); want code %q", c.name, posture, v.Allowed, v.Code, v.Reason, c.want[i])
			}
			if !v.Allowed && v.Reason == "" {
				t.Errorf("%s/%s: refusal without a reason", c.name, posture)
			}
		}
	}
}

func TestGateRefusalCodesSayWhoRefused(t *testing.T) {
	p := mustPolicy(t, policy.Config{})
	call := agent.Call{Tool: "bash", Args: bashArgs("go build ./...")}
	cases := []struct {
		step     policytest.Step
		code     string
		mentions string
	}{
		{policytest.Declined("use make"), agent.RefusedByPerson, "They said: use make"},
		{policytest.Fails(policy.ErrExpired), agent.RefusedExpired, "did not answer in time"},
		{policytest.Fails(policy.ErrUnattended), agent.RefusedUnattended, "without asking anyone"},
	}
	for _, c := range cases {
		a := policytest.NewApprover(c.step)
		g, _ := policy.NewGate(policy.GateConfig{Policy: p, Approver: a})
		v, err := g.Authorize(context.Background(), call)
		if err != nil || v.Allowed || v.Code != c.code || !strings.Contains(v.Reason, c.mentions) {
			t.Errorf("%s: %+v, %v", c.code, v, err)
		}
		if c.code != agent.RefusedByPerson && strings.Contains(v.Reason, "declined") {
			t.Errorf("%s: reason claims a person declined: %q", c.code, v.Reason)
		}
	}
	// An approver failure is a failed decision, not a refusal.
	g, _ := policy.NewGate(policy.GateConfig{Policy: p, Approver: policytest.NewApprover(policytest.Fails(errors.New("store down")))})
	if _, err := g.Authorize(context.Background(), call); err == nil {
		t.Error("approver error was swallowed")
	}
	// A cancelled context stops the wait.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g, _ = policy.NewGate(policy.GateConfig{Policy: p, Approver: policytest.NewApprover(policytest.Once())})
	if _, err := g.Authorize(ctx, call); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestGateGrantsForTask(t *testing.T) {
	p := mustPolicy(t, policy.Config{})
	a := policytest.NewApprover(policytest.ForTask("Bash(go test:*)"), policytest.Once())
	g, _ := policy.NewGate(policy.GateConfig{Policy: p, Approver: a, Workdir: "/ws"})
	auth := func(cmd string) agent.Verdict {
		t.Helper()
		v, err := g.Authorize(context.Background(), agent.Call{Tool: "bash", Args: bashArgs(cmd)})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := auth("go test ./a"); !v.Allowed {
		t.Fatalf("first call: %+v", v)
	}
	reqs := a.Requests()
	if len(reqs) != 1 || reqs[0].Subject != "go test ./a" || strings.Join(reqs[0].Scopes, "|") != "Bash=go test ./a|Bash(go test:*)" {
		t.Fatalf("request: %+v", reqs)
	}
	if v := auth("go test ./b -run X"); !v.Allowed || len(a.Requests()) != 1 {
		t.Fatalf("granted prefix should not ask again: %+v, %d requests", v, len(a.Requests()))
	}
	// The grant does not stretch over an operator: the person is asked again.
	if v := auth("go test ./b && rm -rf x"); !v.Allowed || len(a.Requests()) != 2 {
		t.Fatalf("compound: %+v, %d requests", v, len(a.Requests()))
	}
	if got := a.Requests()[1].Scopes; strings.Join(got, "|") != "Bash=go test ./b && rm -rf x" {
		t.Errorf("compound scopes %q: only the exact command may be offered", got)
	}
	if got := g.Grants(); strings.Join(got, "|") != "Bash(go test:*)" {
		t.Errorf("Grants() = %q", got)
	}
	// Restored grants act the same; nobody is asked.
	g2, err := policy.NewGate(policy.GateConfig{Policy: p, Grants: g.Grants()})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := g2.Authorize(context.Background(), agent.Call{Tool: "bash", Args: bashArgs("go test ./c")}); !v.Allowed {
		t.Errorf("restored grant: %+v", v)
	}
	if _, err := policy.NewGate(policy.GateConfig{Policy: p, Grants: []string{"Bash("}}); err == nil {
		t.Error("bad restored grant accepted")
	}
}

func TestGateScopeMustBeOffered(t *testing.T) {
	p := mustPolicy(t, policy.Config{})
	a := policytest.NewApprover(policytest.ForTask("Bash"))
	g, _ := policy.NewGate(policy.GateConfig{Policy: p, Approver: a})
	if _, err := g.Authorize(context.Background(), agent.Call{Tool: "bash", Args: bashArgs("make")}); err == nil {
		t.Fatal("an approver widened the grant to a scope that was not offered")
	}
	if len(g.Grants()) != 0 {
		t.Fatalf("grants: %q", g.Grants())
	}
}

func TestGateNestedOnlyExactGrant(t *testing.T) {
	p := mustPolicy(t, policy.Config{})
	a := policytest.NewApprover(policytest.ForTask("Bash=bash -c 'make'"))
	g, _ := policy.NewGate(policy.GateConfig{Policy: p, Posture: policy.PostureAuto, Approver: a})
	call := agent.Call{Tool: "bash", Args: bashArgs("bash -c 'make'")}
	for i := 0; i < 2; i++ {
		if v, err := g.Authorize(context.Background(), call); err != nil || !v.Allowed {
			t.Fatalf("call %d: %+v %v", i, v, err)
		}
	}
	reqs := a.Requests()
	if len(reqs) != 1 || strings.Join(reqs[0].Scopes, "|") != "Bash=bash -c 'make'" || !strings.Contains(reqs[0].Reason, "-c") {
		t.Fatalf("requests: %+v", reqs)
	}
}

func TestGateEditScopes(t *testing.T) {
	p := mustPolicy(t, policy.Config{})
	a := policytest.NewApprover(policytest.ForTask("Edit(docs/a.md)"), policytest.Once())
	g, _ := policy.NewGate(policy.GateConfig{Policy: p, Approver: a, Workdir: "/ws"})
	call := func(tool, path string) agent.Verdict {
		v, err := g.Authorize(context.Background(), agent.Call{Tool: tool, Args: fileArgs(path)})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	call("write_file", "/ws/docs/a.md")
	if got := a.Requests()[0].Scopes; strings.Join(got, "|") != "Edit(docs/a.md)|Edit" {
		t.Fatalf("scopes %q", got)
	}
	if v := call("edit_file", "docs/a.md"); !v.Allowed || len(a.Requests()) != 1 {
		t.Fatalf("Edit grant should cover edit_file too: %+v", v)
	}
	call("write_file", "docs/b.md")
	if len(a.Requests()) != 2 {
		t.Fatal("a path grant covered another path")
	}
}

func TestExplicitAskOffersNoScopes(t *testing.T) {
	p := mustPolicy(t, policy.Config{Ask: []string{"Bash(git push:*)"}})
	a := policytest.NewApprover(policytest.Once())
	g, _ := policy.NewGate(policy.GateConfig{Policy: p, Approver: a, Posture: policy.PostureAuto})
	v, err := g.Authorize(context.Background(), agent.Call{Tool: "bash", Args: bashArgs("git push")})
	if err != nil || !v.Allowed {
		t.Fatalf("%+v %v", v, err)
	}
	if r := a.Requests(); len(r) != 1 || len(r[0].Scopes) != 0 || !strings.Contains(r[0].Reason, "Bash(git push:*)") {
		t.Fatalf("requests: %+v", r)
	}
}

func TestParsePosture(t *testing.T) {
	for in, want := range map[string]policy.Posture{"": policy.PostureAsk, "ask": policy.PostureAsk, "auto": policy.PostureAuto, "yolo": policy.PostureYolo} {
		if got, err := policy.ParsePosture(in); err != nil || got != want {
			t.Errorf("policy.ParsePosture(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := policy.ParsePosture("YOLO"); err == nil {
		t.Error("policy.ParsePosture accepted YOLO")
	}
	if _, err := policy.NewGate(policy.GateConfig{}); err == nil {
		t.Error("policy.NewGate without a policy")
	}
}

// TestGateSetPosture: a posture change applies to the next decision, of
// the gate and of every gate sharing its posture; deny rules hold in
// every posture and a bad posture changes nothing.
func TestGateSetPosture(t *testing.T) {
	ctx := context.Background()
	pol := mustPolicy(t, policy.Config{Deny: []string{"Edit(secrets/**)"}})
	g, err := policy.NewGate(policy.GateConfig{Policy: pol, Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	child, err := policy.NewGate(policy.GateConfig{Policy: pol, SharePosture: g})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := policy.NewGate(policy.GateConfig{Policy: pol, SharePosture: g, Posture: policy.PostureYolo}); err == nil {
		t.Error("a gate sharing a posture accepted its own too")
	}
	write := agent.Call{Tool: "write_file", Args: fileArgs("a.go")}
	secret := agent.Call{Tool: "write_file", Args: fileArgs("secrets/k")}
	check := func(when string, want string) {
		t.Helper()
		for name, gate := range map[string]*policy.Gate{"gate": g, "child": child} {
			if v, err := gate.Authorize(ctx, write); err != nil || v.Code != want {
				t.Errorf("%s, %s: write %q %v, want %q", when, name, v.Code, err, want)
			}
			if v, _ := gate.Authorize(ctx, secret); v.Code != agent.RefusedByRule {
				t.Errorf("%s, %s: denied write %q, want refused by rule", when, name, v.Code)
			}
		}
	}
	check("ask", agent.RefusedUnattended)
	if err := g.SetPosture(policy.PostureYolo); err != nil {
		t.Fatal(err)
	}
	check("yolo", "")
	if err := g.SetPosture("sometimes"); err == nil || g.Posture() != policy.PostureYolo {
		t.Errorf("a bad posture: %v, posture now %q", err, g.Posture())
	}
	if err := child.SetPosture(""); err != nil || g.Posture() != policy.PostureAsk {
		t.Fatalf("the shared posture: %v, %q", err, g.Posture())
	}
	check("back to ask", agent.RefusedUnattended)
}

// TestGateSetPostureInFlight: a decision that is asking a person ends
// under the posture it started with; the next one uses the new posture.
// Run under -race with decisions and changes at once.
func TestGateSetPostureInFlight(t *testing.T) {
	ctx := context.Background()
	asked, answer := make(chan struct{}, 1), make(chan policy.Answer)
	var calls atomic.Int32
	g, err := policy.NewGate(policy.GateConfig{Policy: mustPolicy(t, policy.Config{Deny: []string{"Edit(secrets/**)"}}), Workdir: t.TempDir(),
		Approver: policy.ApproverFunc(func(ctx context.Context, r policy.Request) (policy.Answer, error) {
			if calls.Add(1) == 1 {
				asked <- struct{}{}
				return <-answer, nil
			}
			return policy.Answer{Choice: policy.Decline}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	write := agent.Call{Tool: "write_file", Args: fileArgs("a.go")}
	first := make(chan agent.Verdict, 1)
	go func() {
		v, _ := g.Authorize(ctx, write)
		first <- v
	}()
	<-asked
	if err := g.SetPosture(policy.PostureYolo); err != nil {
		t.Fatal(err)
	}
	if v, err := g.Authorize(ctx, write); err != nil || v.Code != "" {
		t.Errorf("a decision after the change: %q %v, want allowed", v.Code, err)
	}
	answer <- policy.Answer{Choice: policy.Decline}
	if v := <-first; v.Code != agent.RefusedByPerson {
		t.Errorf("the decision in flight: %q, want the person's refusal", v.Code)
	}

	// Decisions and changes at once: every verdict is one of the two
	// postures' (allowed, or the approver's refusal), a denied path is
	// refused by its rule in both.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if v, _ := g.Authorize(ctx, write); v.Code != "" && v.Code != agent.RefusedByPerson {
					t.Errorf("a write under a changing posture: %q", v.Code)
				}
				if v, _ := g.Authorize(ctx, agent.Call{Tool: "edit_file", Args: fileArgs("secrets/k")}); v.Code != agent.RefusedByRule {
					t.Errorf("a denied write under a changing posture: %q", v.Code)
				}
			}
		}()
	}
	for i := range 400 {
		if err := g.SetPosture([]policy.Posture{policy.PostureAsk, policy.PostureYolo, policy.PostureAuto}[i%3]); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}
