package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Config is the `[permissions]` table. The zero value asks before every
// writer and allows every reader.
type Config struct {
	// Mode is the writer fallback when no rule matches: "ask" (default),
	// "allow" or "deny".
	Mode string
	// Allow, Ask and Deny are rule lists; see ParseRule for the syntax.
	// Precedence is deny > ask > allow > fallback.
	Allow, Ask, Deny []string
	// AllowDynamicBash lets an Allow fallback (mode "allow", or the auto
	// posture) cover nested or indirect shell execution, which otherwise
	// always needs a person.
	AllowDynamicBash bool
}

// Policy evaluates static rules against tool calls. It is immutable after
// New and safe for concurrent use. Evaluating a call does no I/O, except
// that while a Bash deny rule names a command, a program or script a bash
// command runs by path is looked up in the workspace (resolveFiles).
type Policy struct {
	mode               Decision
	allow, ask, deny   *ruleSet
	allowDynamicShells bool
}

// New validates c and precomputes the rule indexes. Every malformed rule
// yields its own error naming the list, the position and the rule.
func New(c Config) (*Policy, error) {
	mode, err := parseMode(c.Mode)
	if err != nil {
		return nil, err
	}
	p := &Policy{mode: mode, allowDynamicShells: c.AllowDynamicBash}
	var errs []error
	build := func(list string, rules []string) *ruleSet {
		set := newRuleSet()
		for i, s := range rules {
			r, err := parseRule(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("policy: %s[%d]: %w", list, i, err))
				continue
			}
			set.add(r)
		}
		return set
	}
	p.allow, p.ask, p.deny = build("allow", c.Allow), build("ask", c.Ask), build("deny", c.Deny)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// Query is one call to evaluate.
type Query struct {
	Tool     string
	ReadOnly bool // the tool declares itself read-only
	Args     json.RawMessage
	// Workdir is the task's absolute workspace directory, optional. With it a
	// relative rule such as Edit(docs/**) also matches an absolute path
	// inside the workspace.
	Workdir string
}

// Evaluation is a decision with the facts behind it.
type Evaluation struct {
	Decision Decision
	// Rule is the deciding rule in canonical form; empty when the fallback
	// decided.
	Rule string
	// HumanOnly marks nested or indirect shell execution: only a person,
	// the yolo posture or an identical Bash= grant may allow it.
	HumanOnly bool
	// ReadOnly is whether the call only reads: the tool says so, or the
	// shell command was classified as read-only.
	ReadOnly bool
	// Reason explains the decision in one sentence a model can act on.
	Reason string
	// DenyUnseen names the Bash deny rules an Ask decision's command may
	// reach unseen (see denyreach.go): only a person may allow it, and the
	// yolo posture refuses it.
	DenyUnseen string
}

// Decide returns the decision for one call: deny > ask > allow > fallback,
// where the fallback is Allow for read-only calls and the mode for writers.
func (p *Policy) Decide(tool string, readOnly bool, args json.RawMessage) Decision {
	return p.Evaluate(Query{Tool: tool, ReadOnly: readOnly, Args: args}).Decision
}

// Evaluate is Decide with the reasons.
func (p *Policy) Evaluate(q Query) Evaluation {
	ev, _ := p.evaluate(q)
	return ev
}

// callFacts is what evaluate learnt about a call; the Gate reuses it for
// grants and approval requests.
type callFacts struct {
	sub subject
	sh  *shellFacts // nil unless the call is a bash command
}

func (p *Policy) evaluate(q Query) (Evaluation, *callFacts) {
	f := &callFacts{sub: extractSubject(q.Args)}
	if q.Tool == "bash" && f.sub.isShell {
		f.sh = analyzeShell(f.sub.command)
		if len(f.sh.files) > 0 && p.deny.hasBashWords() {
			resolveFiles(f.sh, q.Workdir, p.DeniedCommands())
		}
	}
	ro := q.ReadOnly || f.sh != nil && f.sh.readOnly
	ev := Evaluation{ReadOnly: ro}
	if i := p.deny.matchBroad(q, f); i >= 0 {
		ev.Decision, ev.Rule = Deny, p.deny.rules[i].String()
		ev.Reason = "the deny rule `" + ev.Rule + "` blocks this call"
		return ev, f
	}
	if f.sh != nil {
		for _, c := range f.sh.computed {
			if i := p.deny.matchComputed(c); i >= 0 {
				ev.Decision, ev.Rule = Deny, p.deny.rules[i].String()
				ev.Reason = "the deny rule `" + ev.Rule + "` may match this command once its computed words are known; write them out literally"
				return ev, f
			}
		}
	}
	if u, ok := p.unseenDecision(f); ok {
		u.ReadOnly = ev.ReadOnly
		return u, f
	}
	if i := p.ask.matchBroad(q, f); i >= 0 {
		ev.Decision, ev.Rule = Ask, p.ask.rules[i].String()
		ev.Reason = "the ask rule `" + ev.Rule + "` requires a person's approval"
		return ev, f
	}
	if f.sh != nil {
		for _, c := range f.sh.computed {
			if i := p.ask.matchComputed(c); i >= 0 {
				ev.Decision, ev.Rule = Ask, p.ask.rules[i].String()
				ev.Reason = "the ask rule `" + ev.Rule + "` may match this command once its computed words are known, so it requires a person's approval"
				return ev, f
			}
		}
	}
	if f.sh != nil {
		if i, ok := p.allow.exact[strings.TrimSpace(f.sub.command)]; ok {
			ev.Decision, ev.Rule = Allow, p.allow.rules[i].String()
			ev.Reason = "allowed by the exact rule `" + ev.Rule + "`"
			return ev, f
		}
		if f.sh.nested != "" && !p.allowDynamicShells {
			if p.mode == Deny {
				ev.Decision = Deny
				ev.Reason = "the permission mode denies commands no allow rule covers, and " + f.sh.nested
				return ev, f
			}
			ev.Decision, ev.HumanOnly = Ask, true
			ev.Reason = "this command needs a person's approval because " + f.sh.nested
			return ev, f
		}
	}
	if i := p.allow.allows(q, f); i >= 0 {
		ev.Decision, ev.Rule = Allow, p.allow.rules[i].String()
		ev.Reason = "allowed by the rule `" + ev.Rule + "`"
		return ev, f
	}
	if ro {
		ev.Decision, ev.Reason = Allow, "read-only calls are allowed"
		return ev, f
	}
	if strings.HasPrefix(q.Tool, "mcp__") && p.mode != Deny {
		// Declaring an MCP server in the service's configuration is the
		// trust decision for its tools; deny and ask rules still apply.
		ev.Decision, ev.Reason = Allow, "tools of a configured MCP server are allowed"
		return ev, f
	}
	ev.Decision = p.mode
	switch p.mode {
	case Allow:
		ev.Reason = "the permission mode allows writers"
	case Deny:
		ev.Reason = "the permission mode denies " + q.Tool + " calls no allow rule covers"
	default:
		ev.Reason = q.Tool + " changes files or runs commands and no allow rule covers this call"
	}
	return ev, f
}

// matchBroad returns the first rule that matches any part of the call, or
// -1. It serves deny and ask rules, where matching too much is the safe
// mistake: every simple command of a shell script is tried, including those
// inside substitutions and command strings, before and after unwrapping.
func (s *ruleSet) matchBroad(q Query, f *callFacts) int {
	for _, i := range s.byTool[q.Tool] {
		r := &s.rules[i]
		if r.kind == kindBare || r.kind == kindGlob && r.matchSubject(f.sub, q.Workdir, true) || r.kind == kindDomain && r.matchDomain(f.sub, true) {
			return i
		}
	}
	if f.sh == nil {
		return -1
	}
	if i, ok := s.exact[strings.TrimSpace(f.sub.command)]; ok {
		return i
	}
	return s.matchFacts(f.sh)
}

// allows returns the allow rule (or grant) covering the whole call, or -1.
// Dynamic and nested shell commands are covered only by Bash=literal; a
// compound command only part by part by bare Bash or exact-word rules,
// never by a prefix, so `Bash(go test:*)` does not cover
// `go test ./... && rm -rf x`. Read-only parts of a compound command need
// no rule.
func (s *ruleSet) allows(q Query, f *callFacts) int {
	if f.sh == nil {
		for _, i := range s.byTool[q.Tool] {
			r := &s.rules[i]
			if r.kind == kindBare || r.kind == kindGlob && r.matchSubject(f.sub, q.Workdir, false) || r.kind == kindDomain && r.matchDomain(f.sub, false) {
				return i
			}
		}
		return -1
	}
	if i, ok := s.exact[strings.TrimSpace(f.sub.command)]; ok {
		return i
	}
	sh := f.sh
	if sh.dynamic || sh.nested != "" || len(sh.parts) == 0 {
		return -1
	}
	for _, i := range s.byTool["bash"] {
		if s.rules[i].kind == kindBare {
			return i
		}
	}
	if !sh.compound && len(sh.parts) == 1 {
		return s.wordRule(sh.parts[0].words, false, anyKind)
	}
	first := -1
	for _, part := range sh.parts {
		if i := s.wordRule(part.words, false, isWordsKind); i >= 0 {
			if first < 0 {
				first = i
			}
			continue
		}
		if !part.readOnly {
			return -1
		}
	}
	return first
}

func isWordsKind(k ruleKind) bool { return k == kindWords }

// matchSubject matches a glob rule against the call's subject: any subject
// for deny and ask (broad), every subject for allow, so a move_file grant
// must cover both ends.
func (r *Rule) matchSubject(sub subject, workdir string, broad bool) bool {
	vals := sub.values()
	if len(vals) == 0 {
		return false
	}
	for _, v := range vals {
		var ok bool
		if len(sub.paths) > 0 {
			ok = matchPath(r.spec, v, workdir, broad)
		} else {
			ok = matchWildcard(r.spec, v)
		}
		if ok == broad {
			return broad
		}
	}
	return !broad
}

// matchWildcard matches s against a pattern in which `*` stands for any
// run of characters, for subjects that are not paths.
func matchWildcard(pattern, s string) bool {
	star, next := -1, 0
	pi, si := 0, 0
	for si < len(s) {
		switch {
		case pi < len(pattern) && pattern[pi] == '*':
			star, next = pi, si
			pi++
		case pi < len(pattern) && pattern[pi] == s[si]:
			pi++
			si++
		case star >= 0:
			next++
			pi, si = star+1, next
		default:
			return false
		}
	}
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
}
