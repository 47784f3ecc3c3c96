package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// StandingRule is one standing grant as the gate sees it: a rule in allow
// form ("Bash(go test:*)", "Edit(docs/**)") and the id its uses are
// recorded under.
type StandingRule struct {
	ID    string
	Scope string
}

// GrantSet is a compiled, immutable set of standing grants, indexed like
// the policy's own rules so that a decision looks only at the grants that
// can match. It is safe for concurrent use; build a new one to change it.
type GrantSet struct {
	rules *ruleSet
	ids   []StandingRule // by rule index
	// lead is, by rule index, the literal leading segments of a path glob
	// ("docs/api" of "docs/api/**/*.md"), "" when it has none: a path can
	// match only if it is that or lies under it. byLead indexes the path
	// rules of each tool by the first segment of their lead (open: those
	// without one), so a call on paths tries only the globs that can
	// match it — with hundreds of edit grants, a handful.
	lead   []string
	byLead map[string]map[string][]int // tool → first segment → rules
	open   map[string][]int            // tool → rules without a lead
}

// NewGrantSet compiles grants. A grant whose scope does not parse is left
// out and named in the error, which joins one error per such grant; the
// set of the others is returned all the same, so one bad row cannot take
// the good ones away. A scope given twice is one rule (the first id).
func NewGrantSet(grants []StandingRule) (*GrantSet, error) {
	s := &GrantSet{rules: newRuleSet()}
	var errs []error
	for _, g := range grants {
		r, err := parseRule(strings.TrimSpace(g.Scope))
		if err != nil {
			errs = append(errs, fmt.Errorf("policy: standing grant %s: %w", g.ID, err))
			continue
		}
		n := len(s.rules.rules)
		s.rules.add(r)
		if len(s.rules.rules) > n {
			s.ids = append(s.ids, g)
			s.lead = append(s.lead, literalLead(r))
		}
	}
	s.byLead, s.open = map[string]map[string][]int{}, map[string][]int{}
	for tool, idxs := range s.rules.byTool {
		for _, i := range idxs {
			if s.lead[i] == "" {
				s.open[tool] = append(s.open[tool], i)
				continue
			}
			if s.byLead[tool] == nil {
				s.byLead[tool] = map[string][]int{}
			}
			first, _, _ := strings.Cut(s.lead[i], "/")
			s.byLead[tool][first] = append(s.byLead[tool][first], i)
		}
	}
	return s, errors.Join(errs...)
}

// Len reports how many distinct grants the set holds; a nil set holds none.
func (s *GrantSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.ids)
}

// match returns the grant covering the call, with the task grants' rule:
// a command that runs code indirectly is covered only by an identical
// Bash= grant.
func (s *GrantSet) match(q Query, f *callFacts, humanOnly bool) (StandingRule, bool) {
	if s.Len() == 0 {
		return StandingRule{}, false
	}
	if humanOnly {
		i, ok := s.rules.exact[strings.TrimSpace(f.sub.command)]
		if !ok {
			return StandingRule{}, false
		}
		return s.ids[i], true
	}
	if f.sh == nil && len(f.sub.paths) > 0 {
		return s.matchPaths(q, f)
	}
	if i := s.rules.allows(q, f); i >= 0 {
		return s.ids[i], true
	}
	return StandingRule{}, false
}

// matchPaths is ruleSet.allows for a call on paths, trying a glob only
// when every path can lie under its literal lead.
func (s *GrantSet) matchPaths(q Query, f *callFacts) (StandingRule, bool) {
	try := func(i int) bool {
		r := &s.rules.rules[i]
		return r.kind == kindBare || r.kind == kindGlob && r.matchSubject(f.sub, q.Workdir, false) || r.kind == kindDomain && r.matchDomain(f.sub, false)
	}
	for _, i := range s.open[q.Tool] {
		if try(i) {
			return s.ids[i], true
		}
	}
	byLead := s.byLead[q.Tool]
	if len(byLead) == 0 {
		return StandingRule{}, false
	}
	// Every path must match, so the first path's forms name the
	// candidates: the rules whose lead starts with one of their first
	// segments.
	forms := make([][]string, 0, len(f.sub.paths))
	for _, p := range f.sub.paths {
		forms = append(forms, pathForms(p, q.Workdir))
	}
	for _, form := range forms[0] {
		first, _, _ := strings.Cut(form, "/")
		for _, i := range byLead[first] {
			if allUnder(forms, s.lead[i]) && try(i) {
				return s.ids[i], true
			}
		}
	}
	return StandingRule{}, false
}

// allUnder reports whether each path has a form that is lead or lies
// under it.
func allUnder(forms [][]string, lead string) bool {
	for _, fs := range forms {
		ok := false
		for _, f := range fs {
			if f == lead || strings.HasPrefix(f, lead) && len(f) > len(lead) && f[len(lead)] == '/' {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// literalLead returns the leading segments of a path glob rule that hold
// no glob syntax, joined, or "" when the first segment has some. matchGlob
// compares such segments literally, so a path the glob matches starts
// with them.
func literalLead(r Rule) string {
	if r.kind != kindGlob {
		return ""
	}
	segs := strings.Split(r.spec, "/")
	n := 0
	for n < len(segs) && !strings.ContainsAny(segs[n], `*?[\`) {
		n++
	}
	if n == len(segs) {
		n-- // a glob without syntax: the path itself, or under it as matched below
	}
	if n <= 0 {
		return ""
	}
	return strings.Join(segs[:n], "/")
}

// Standing supplies a task's standing grants ("Allow always": durable
// grants for every task of a workspace, schedule or webhook) to its Gate.
// The gate consults them only for a call that would otherwise ask a
// person, and never against a deny or an explicit ask rule.
// Implementations must be safe for concurrent use.
type Standing interface {
	// StandingGrants returns the grants that apply to the task. With
	// fresh false a cached copy will do (the gate calls this for every
	// call that would ask a person, so it must be cheap); with fresh true
	// the copy must reflect every grant added before the call, on any
	// node — the gate asks for that before it gives up and asks a person.
	// Returning the same *GrantSet means nothing changed.
	StandingGrants(ctx context.Context, fresh bool) (*GrantSet, error)
	// UseStandingGrant records that grant g allows req (the audit of
	// every use) and reports whether g still stood: false when it was
	// revoked or expired meanwhile, so it allowed nothing.
	UseStandingGrant(ctx context.Context, g StandingRule, req Request) (bool, error)
}

// standingAllows reports whether a standing grant allows the call, after
// recording its use. A grant found in a cached copy that turns out to be
// gone, or no grant found there, sends the gate to a fresh copy once.
func (g *Gate) standingAllows(ctx context.Context, q Query, f *callFacts, humanOnly bool, req Request) (bool, error) {
	var seen *GrantSet
	for _, fresh := range []bool{false, true} {
		set, err := g.standing.StandingGrants(ctx, fresh)
		if err != nil {
			return false, fmt.Errorf("policy: standing grants: %w", err)
		}
		if set == seen {
			continue // nothing changed since the cached copy
		}
		seen = set
		rule, ok := set.match(q, f, humanOnly)
		if !ok {
			continue
		}
		used, err := g.standing.UseStandingGrant(ctx, rule, req)
		if err != nil {
			return false, fmt.Errorf("policy: standing grant %s: %w", rule.ID, err)
		}
		if used {
			return true, nil
		}
	}
	return false, nil
}
