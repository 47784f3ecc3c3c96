package policy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"reasonix/agent"
)

// GateConfig configures one task's Gate.
type GateConfig struct {
	// Policy is the static policy; required.
	Policy *Policy
	// Posture resolves Ask decisions; empty means PostureAsk.
	Posture Posture
	// SharePosture, when set, makes the new gate follow that gate's
	// posture instead of having its own: a SetPosture on either changes
	// both (a session's sub-agents follow the session's tool-approval
	// setting this way). Posture must then be empty.
	SharePosture *Gate
	// Approver asks a person; nil means nobody can be asked and every call
	// that needs a person is refused as unattended.
	Approver Approver
	// Workdir is the task's absolute workspace, so relative path rules and
	// grants match absolute paths inside it. Optional.
	Workdir string
	// Grants restores grants made earlier in the task (see Gate.Grants).
	Grants []string
	// Standing supplies the standing grants ("Allow always") that apply
	// to the task; nil means none. They allow a call that would ask a
	// person, like a task grant, and each use is recorded through it.
	Standing Standing
	// ShellSandboxed says the bash tool runs inside an OS sandbox that
	// confines its writes (Confinement.Shell() is not nil). The zero value,
	// false, means bash runs unconfined: then the auto posture lets a bash
	// command through only when ShellStaysInside proves its writes land in
	// Workdir or AllowWrite, and asks about every other one.
	ShellSandboxed bool
	// AllowWrite are further absolute directories bash may write to when it
	// is not sandboxed (the confinement's allow_write roots; see
	// Confinement.Writable). Optional.
	AllowWrite []string
	// HumanOnly are tools every call of which needs a person, under every
	// posture, whatever grant stands (a memory write of a task a webhook
	// started), or "tool(key=value)" for the calls whose string argument
	// key is value (a user-scope remember); a deny rule still refuses them
	// first. Optional.
	HumanOnly []string
	// AllowRead are further absolute directories read-only file tools may
	// read under the ask posture without a person (the workspace always);
	// resolved like AllowWrite. Optional.
	AllowRead []string
	// Network says the task may reach the network ([sandbox] network).
	// Without it the auto posture does not let web_fetch through on its
	// own: a URL carries what the task read to whoever serves it, which
	// is the egress the sandbox's network switch closes for bash.
	Network bool
}

// Gate is the agent.Gate of one task: the policy, the posture, the task's
// grants and the approver. It is safe for concurrent use.
type Gate struct {
	policy *Policy
	// posture is read once per decision, so a decision in flight ends
	// under the posture it started with; it may be shared with other
	// gates (GateConfig.SharePosture).
	posture    *atomic.Pointer[Posture]
	approver   Approver
	standing   Standing
	workdir    string
	sandboxed  bool     // bash runs inside an OS sandbox
	allowWrite []string // further roots bash may write to when it is not
	allowRead  []string // further roots file tools read without asking under ask
	readRoot   string   // the workspace, symlink-free
	humanOnly  []string // tools only a person may allow
	network    bool     // the task may reach the network

	mu     sync.RWMutex
	grants *ruleSet
}

var _ agent.Gate = (*Gate)(nil)

// NewGate validates c and returns the task's gate.
func NewGate(c GateConfig) (*Gate, error) {
	if c.Policy == nil {
		return nil, errors.New("policy: gate needs a Policy")
	}
	cell := new(atomic.Pointer[Posture])
	if c.SharePosture != nil {
		if c.Posture != "" {
			return nil, errors.New("policy: a gate that shares another's posture has none of its own")
		}
		cell = c.SharePosture.posture
	} else {
		posture, err := ParsePosture(string(c.Posture))
		if err != nil {
			return nil, err
		}
		cell.Store(&posture)
	}
	g := &Gate{policy: c.Policy, posture: cell, approver: c.Approver, standing: c.Standing, workdir: c.Workdir, grants: newRuleSet(),
		sandboxed: c.ShellSandboxed, allowWrite: slices.Clone(c.AllowWrite), humanOnly: slices.Clone(c.HumanOnly), network: c.Network}
	g.readRoot = c.Workdir
	if real, err := resolvePath(c.Workdir, "/"); err == nil {
		g.readRoot = real
	}
	for _, r := range c.AllowRead {
		if real, err := resolvePath(r, "/"); err == nil {
			g.allowRead = append(g.allowRead, real)
		}
	}
	for _, s := range c.Grants {
		if err := g.Grant(s); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Posture is the posture the gate decides under now.
func (g *Gate) Posture() Posture { return *g.posture.Load() }

// SetPosture changes the posture in place (an editor's tool-approval
// setting), for this gate and every gate sharing its posture: decisions
// already in flight end under the old one, every later decision uses p.
// Deny rules, explicit ask rules and human-only tools hold in every
// posture, as always; grants are kept. The empty string is PostureAsk.
func (g *Gate) SetPosture(p Posture) error {
	posture, err := ParsePosture(string(p))
	if err != nil {
		return err
	}
	g.posture.Store(&posture)
	return nil
}

// Grant adds a task grant (a rule in allow form). Grants cover the writer
// fallback and nested shell commands identical to a Bash= grant; they never
// override deny or explicit ask rules.
func (g *Gate) Grant(scope string) error {
	r, err := parseRule(scope)
	if err != nil {
		return fmt.Errorf("policy: grant: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.grants.add(r)
	return nil
}

// Grants lists the task's grants in canonical form, oldest first, for the
// runner to persist and pass back through GateConfig.Grants.
func (g *Gate) Grants() []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]string, len(g.grants.rules))
	for i, r := range g.grants.rules {
		out[i] = r.String()
	}
	return out
}

// Authorize decides one call. It blocks while the approver asks a person
// and honours ctx; an error means the decision itself failed.
func (g *Gate) Authorize(ctx context.Context, call agent.Call) (agent.Verdict, error) {
	posture := g.Posture()
	q := Query{Tool: call.Tool, ReadOnly: call.ReadOnly, Args: call.Args, Workdir: g.workdir}
	ev, f := g.policy.evaluate(q)
	humanOnly := ev.Decision != Deny && humanOnlyCall(g.humanOnly, call)
	if humanOnly {
		// As an explicit ask rule (no grant answers it) that no posture
		// answers either.
		ev.Decision, ev.Rule, ev.Reason = Ask, call.Tool, call.Tool+" needs a person's approval in this task"
	}
	if ev.Decision == Allow && ev.Rule == "" && posture == PostureAsk {
		if p := g.readsOutside(call.Tool, f); p != "" {
			ev.Decision, ev.Reason = Ask, call.Tool+" would read "+p+", which is outside the workspace"
		}
	}
	switch ev.Decision {
	case Allow:
		return agent.Allow, nil
	case Deny:
		return agent.Verdict{Code: agent.RefusedByRule, Reason: "Blocked by the permission policy: " + ev.Reason + ". Do not retry this call; find another way or report that you are blocked."}, nil
	}
	explicit := ev.Rule != ""
	unconfined := false
	if !explicit && g.granted(q, f, ev.HumanOnly) {
		return agent.Allow, nil
	}
	switch {
	case humanOnly:
	case posture == PostureYolo && ev.DenyUnseen != "":
		// Nobody is asked under yolo, and a deny rule may be what this
		// command hides (see denyreach.go).
		return agent.Verdict{Code: agent.RefusedByRule, Reason: "Blocked by the permission policy: " + ev.Reason + "; under yolo nobody can. Write the command out as plain commands, or report that you are blocked."}, nil
	case posture == PostureYolo:
		return agent.Allow, nil
	case posture == PostureAuto && !explicit && !ev.HumanOnly:
		why := g.unconfinedWrite(f)
		if why == "" && call.Tool == webFetchTool && !g.network {
			why = "web_fetch would send a request to " + cmp.Or(f.sub.host, "a URL without a host") +
				" and this task has no network ([sandbox] network = false); an allow rule WebFetch(domain:" +
				cmp.Or(f.sub.host, "…") + ") or a person may let it"
		}
		if why == "" {
			return agent.Allow, nil
		}
		ev.Reason, unconfined = why, true
	}
	// The call would ask a person now: a standing grant answers instead.
	// This is after deny (returned above) and never for an explicit ask
	// rule, as with task grants; and after the posture, so a call the
	// posture allows anyway records no use.
	if !explicit && g.standing != nil {
		ok, err := g.standingAllows(ctx, q, f, ev.HumanOnly, Request{Call: call, Subject: subjectText(f), Reason: ev.Reason})
		if err != nil {
			return agent.Verdict{}, err
		}
		if ok {
			return agent.Allow, nil
		}
	}
	if g.approver == nil {
		hint := g.hint(posture, explicit, ev.HumanOnly)
		if unconfined {
			hint = "Without a sandbox, --auto runs only bash commands proven to write inside the workspace: use literal relative paths and known commands, or report that you are blocked."
		}
		if ev.DenyUnseen != "" {
			hint = "Only a person can approve it; run it as plain commands instead, or report that you are blocked."
		}
		return agent.Verdict{Code: agent.RefusedUnattended, Reason: "Refused without asking anyone: " + ev.Reason + ", and nobody can approve calls in this run. " + hint}, nil
	}
	req := Request{Call: call, Subject: subjectText(f), Preview: preview(call, f), Reason: ev.Reason}
	if !explicit {
		req.Scopes = g.scopes(call, f, ev.HumanOnly)
	}
	ans, err := g.approver.Approve(ctx, req)
	switch {
	case errors.Is(err, ErrExpired):
		return agent.Verdict{Code: agent.RefusedExpired, Reason: "A person was asked to approve this call and did not answer in time, so it did not run (" + ev.Reason + ")."}, nil
	case errors.Is(err, ErrUnattended):
		return agent.Verdict{Code: agent.RefusedUnattended, Reason: "Refused without asking anyone: " + ev.Reason + ", and no approver was reachable. " + g.hint(posture, explicit, ev.HumanOnly)}, nil
	case err != nil:
		return agent.Verdict{}, fmt.Errorf("policy: approval of %s: %w", call.Tool, err)
	}
	switch ans.Choice {
	case AllowOnce:
		return agent.Allow, nil
	case AllowForTask:
		if !slices.Contains(req.Scopes, ans.Scope) {
			return agent.Verdict{}, fmt.Errorf("policy: approval of %s: scope %q was not offered", call.Tool, ans.Scope)
		}
		if err := g.Grant(ans.Scope); err != nil {
			return agent.Verdict{}, err
		}
		return agent.Allow, nil
	case Decline:
		reason := "A person declined this call."
		if note := strings.TrimSpace(ans.Note); note != "" {
			reason += " They said: " + note
		}
		return agent.Verdict{Code: agent.RefusedByPerson, Reason: reason}, nil
	}
	return agent.Verdict{}, fmt.Errorf("policy: approval of %s: approver returned no decision", call.Tool)
}

// unconfinedWrite returns why the auto posture may not let a bash call
// through on its own: bash is not sandboxed and the command is not proven
// to write only inside the workspace. Empty means it may.
func (g *Gate) unconfinedWrite(f *callFacts) string {
	if g.sandboxed || f.sh == nil {
		return ""
	}
	ok, why := ShellStaysInside(f.sub.command, g.workdir, g.allowWrite)
	if ok {
		return ""
	}
	return "this command may write outside the workspace (" + why + ") and no sandbox is available for bash here"
}

// granted reports whether a task grant covers the call. Nested shell
// commands are covered only by an identical Bash= grant.
func (g *Gate) granted(q Query, f *callFacts, humanOnly bool) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if humanOnly {
		_, ok := g.grants.exact[strings.TrimSpace(f.sub.command)]
		return ok
	}
	return g.grants.allows(q, f) >= 0
}

func (g *Gate) hint(posture Posture, explicit, humanOnly bool) string {
	switch {
	case humanOnly:
		return "Only a person (or the yolo posture) can approve commands that run code indirectly; run it as a plain command instead, or report that you are blocked."
	case explicit:
		return "An ask rule needs a person for this call; report that you are blocked if it is required."
	case posture == PostureAsk:
		return "This run fails closed; it needs --auto (or an allow rule) to make ordinary changes."
	}
	return ""
}

// maxPreview bounds the preview shown to a person.
const maxPreview = 4 << 10

func subjectText(f *callFacts) string {
	if f.sub.isShell {
		return f.sub.command
	}
	return strings.Join(f.sub.values(), " -> ")
}

func preview(call agent.Call, f *callFacts) string {
	s := string(call.Args)
	if f.sub.isShell {
		s = f.sub.command
	}
	return agent.BoundResult(s, maxPreview)
}
