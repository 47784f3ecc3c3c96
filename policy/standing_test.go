package policy_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"reasonix/agent"
	"reasonix/policy"
)

// fakeStanding serves a cached and a fresh grant set and records uses;
// grants in gone were revoked since the cache was read.
type fakeStanding struct {
	mu            sync.Mutex
	cached, fresh *policy.GrantSet
	gone          map[string]bool
	used          []string
	freshReads    int
}

func (s *fakeStanding) StandingGrants(_ context.Context, fresh bool) (*policy.GrantSet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fresh {
		s.freshReads++
		return s.fresh, nil
	}
	return s.cached, nil
}

func (s *fakeStanding) UseStandingGrant(_ context.Context, g policy.StandingRule, _ policy.Request) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone[g.ID] {
		return false, nil
	}
	s.used = append(s.used, g.ID)
	return true, nil
}

func grantSet(t testing.TB, scopes ...string) *policy.GrantSet {
	t.Helper()
	var rules []policy.StandingRule
	for i, s := range scopes {
		rules = append(rules, policy.StandingRule{ID: fmt.Sprintf("sg_%d", i), Scope: s})
	}
	set, err := policy.NewGrantSet(rules)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestStandingGrantDecisions: a standing grant allows what would ask a
// person (and records the use), never what a deny or an explicit ask rule
// decides, nor what the posture allows anyway; a grant revoked since the
// cached copy allows nothing; a grant added since is found in a fresh copy.
func TestStandingGrantDecisions(t *testing.T) {
	ctx := context.Background()
	cfg := policy.Config{Deny: []string{"Bash(go test -exec:*)"}, Ask: []string{"Edit(*.lock)"}}
	set := grantSet(t, "Bash(go test:*)", "Edit(**)", "Bash=eval x")
	cases := []struct {
		name     string
		posture  policy.Posture
		tool     string
		args     []byte
		gone     []string
		want     string
		wantUsed []string
	}{
		{"prefix grant allows", policy.PostureAsk, "bash", bashArgs("go test ./..."), nil, "", []string{"sg_0"}},
		{"edit grant allows", policy.PostureAsk, "write_file", fileArgs("docs/a.md"), nil, "", []string{"sg_1"}},
		{"deny rule wins", policy.PostureAsk, "bash", bashArgs("go test -exec sudo ./..."), nil, agent.RefusedByRule, nil},
		{"explicit ask rule still asks", policy.PostureAsk, "write_file", fileArgs("go.lock"), nil, agent.RefusedUnattended, nil},
		{"no grant covers it", policy.PostureAsk, "bash", bashArgs("make deploy"), nil, agent.RefusedUnattended, nil},
		{"compound needs every part", policy.PostureAsk, "bash", bashArgs("go test ./... && curl x"), nil, agent.RefusedUnattended, nil},
		{"nested only by exact grant", policy.PostureAsk, "bash", bashArgs("eval x"), nil, "", []string{"sg_2"}},
		{"revoked since the cache", policy.PostureAsk, "bash", bashArgs("go test ./..."), []string{"sg_0"}, agent.RefusedUnattended, nil},
		{"auto allows without a use", policy.PostureAuto, "write_file", fileArgs("docs/a.md"), nil, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &fakeStanding{cached: set, fresh: set, gone: map[string]bool{}}
			for _, id := range c.gone {
				st.gone[id] = true
			}
			g, err := policy.NewGate(policy.GateConfig{Policy: mustPolicy(t, cfg), Posture: c.posture, Standing: st,
				Workdir: t.TempDir(), ShellSandboxed: true})
			if err != nil {
				t.Fatal(err)
			}
			v, err := g.Authorize(ctx, agent.Call{Tool: c.tool, Args: c.args})
			if err != nil {
				t.Fatal(err)
			}
			if v.Code != c.want || v.Allowed != (c.want == "") {
				t.Errorf("verdict %+v, want code %q", v, c.want)
			}
			if !slices.Equal(st.used, c.wantUsed) {
				t.Errorf("uses %v, want %v", st.used, c.wantUsed)
			}
		})
	}
	t.Run("added since the cache", func(t *testing.T) {
		st := &fakeStanding{cached: grantSet(t), fresh: set}
		g, _ := policy.NewGate(policy.GateConfig{Policy: mustPolicy(t, cfg), Standing: st, Workdir: t.TempDir()})
		if v, _ := g.Authorize(ctx, agent.Call{Tool: "bash", Args: bashArgs("go test ./x")}); !v.Allowed || st.freshReads != 1 {
			t.Errorf("verdict %+v after %d fresh reads, want allowed from the fresh copy", v, st.freshReads)
		}
	})
}

func TestNewGrantSetKeepsTheGoodOnes(t *testing.T) {
	set, err := policy.NewGrantSet([]policy.StandingRule{{ID: "a", Scope: "Bash("}, {ID: "b", Scope: "Bash(go test:*)"}, {ID: "c", Scope: "Bash(go test:*)"}})
	if err == nil || set.Len() != 1 {
		t.Errorf("NewGrantSet = %d grants, %v; want the one good grant and an error naming the bad one", set.Len(), err)
	}
}

// BenchmarkDecideWithGrants measures a decision that a standing grant
// answers, among 1,000 grants (Bash prefixes, edit globs and tools) on top
// of BenchmarkDecide's 1,000 rules: the cost the grant lookup adds to a
// call that would otherwise ask a person.
func BenchmarkDecideWithGrants(b *testing.B) {
	var c policy.Config
	for i := range 1000 {
		switch i % 4 {
		case 0:
			c.Deny = append(c.Deny, fmt.Sprintf("Bash(tool%d sub:*)", i))
		case 1:
			c.Ask = append(c.Ask, fmt.Sprintf("Edit(dir%d/**)", i))
		case 2:
			c.Allow = append(c.Allow, fmt.Sprintf("Bash(cmd%d run:*)", i))
		default:
			c.Allow = append(c.Allow, fmt.Sprintf("mcp__srv%d__tool", i))
		}
	}
	var scopes []string
	for i := range 999 {
		switch i % 3 { // docs997 is the last edit grant
		case 0:
			scopes = append(scopes, fmt.Sprintf("Bash(make target%d:*)", i))
		case 1:
			scopes = append(scopes, fmt.Sprintf("Edit(docs%d/**)", i))
		default:
			scopes = append(scopes, fmt.Sprintf("mcp__grant%d__tool", i))
		}
	}
	scopes = append(scopes, "Bash(go test:*)")
	set := grantSet(b, scopes...)
	st := &fakeStanding{cached: set, fresh: set}
	ctx := context.Background()
	for _, base := range []struct {
		name string
		cfg  policy.Config
	}{
		// "rules": BenchmarkDecide's 1,000 rules as well (its 250 edit ask
		// rules are globs the policy tries one by one); "grants": no
		// rules, so the time is the analysis and the grant lookup.
		{"rules", c},
		{"grants", policy.Config{}},
	} {
		g, err := policy.NewGate(policy.GateConfig{Policy: mustPolicy(b, base.cfg), Standing: st, Workdir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			call agent.Call
		}{
			{"bash", agent.Call{Tool: "bash", Args: bashArgs("go test ./pkg/... -run TestX -count=1")}},
			// The edit grants are globs tried one by one: the last one matches.
			{"edit", agent.Call{Tool: "write_file", Args: fileArgs("docs997/guide/a.md")}},
		} {
			b.Run(base.name+"/"+c.name, func(b *testing.B) {
				if v, err := g.Authorize(ctx, c.call); err != nil || !v.Allowed {
					b.Fatalf("verdict %+v, %v", v, err)
				}
				b.ReportAllocs()
				for b.Loop() {
					g.Authorize(ctx, c.call)
				}
			})
		}
	}
}

// TestStandingEditGrantsByDirectory: a directory grant covers paths under
// it, written relative or absolute inside the workspace, and nothing
// beside it (docsx is not docs).
func TestStandingEditGrantsByDirectory(t *testing.T) {
	ctx := context.Background()
	wd := t.TempDir()
	set := grantSet(t, "Edit(src/api/**)", "Edit(docs/**)", "Edit(/etc/reasonix/*.toml)")
	for _, c := range []struct {
		path string
		want bool
	}{
		{"docs/a.md", true},
		{wd + "/docs/guide/b.md", true},
		{"src/api/v1/h.go", true},
		{"src/other.go", false},
		{"docsx/a.md", false},
		{"/etc/reasonix/x.toml", true},
		{"/etc/passwd", false},
	} {
		st := &fakeStanding{cached: set, fresh: set}
		g, err := policy.NewGate(policy.GateConfig{Policy: mustPolicy(t, policy.Config{}), Standing: st, Workdir: wd})
		if err != nil {
			t.Fatal(err)
		}
		v, err := g.Authorize(ctx, agent.Call{Tool: "write_file", Args: fileArgs(c.path)})
		if err != nil || v.Allowed != c.want {
			t.Errorf("write_file %s: %+v, %v; want allowed %v", c.path, v, err, c.want)
		}
	}
}
