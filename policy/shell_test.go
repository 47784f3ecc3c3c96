package policy

import (
	"encoding/json"
	"testing"
)

func bashArgs(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return b
}

func mustPolicy(t testing.TB, c Config) *Policy {
	t.Helper()
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBypassCorpus checks that no prefix grant stretches to cover an added
// operator, a substitution, a redirect or an indirect command.
func TestBypassCorpus(t *testing.T) {
	cases := []struct {
		cmd   string
		grant string
	}{
		{"go test ./... && rm -rf x", "Bash(go test:*)"},
		{"go test $(rm -rf x)", "Bash(go test:*)"},
		{"go test `rm -rf x`", "Bash(go test:*)"},
		{"bash -c 'rm -rf x'", "Bash(bash:*)"},
		{"echo ok; git push", "Bash(echo:*)"},
		{"echo ok\ngit push", "Bash(echo:*)"},
		{"env X=1 git push", "Bash(env:*)"},
		{"env X=1 git push", "Bash(git push:*)"},
		{"command git push", "Bash(command:*)"},
		{"xargs rm", "Bash(xargs:*)"},
		{"xargs rm", "Bash(rm:*)"},
		{"find . -exec rm {} +", "Bash(find:*)"},
		{"go test <(rm -rf x)", "Bash(go test:*)"},
		{"go test > /etc/passwd", "Bash(go test:*)"},
		{"eval \"git push\"", "Bash(eval:*)"},
		{". ./evil.sh", "Bash(.:*)"},
		{"timeout 5 git push", "Bash(timeout:*)"},
		{"go test 'x' |& sh", "Bash(go test:*)"},
		{"go test ./... || rm -rf x", "Bash(go test:*)"},
		{"go test ./... & rm -rf x", "Bash(go test:*)"},
		{"(go test ./...)", "Bash(go test:*)"},
		{"{ go test ./...; }", "Bash(go test:*)"},
		{"go test \"$(rm -rf x)\"", "Bash(go test:*)"},
		{"go test $X", "Bash(go test:*)"},
		{"X=1 go test", "Bash(go test:*)"},
		{"go test *", "Bash(go test:*)"},
		{"go test <<EOF\nx\nEOF", "Bash(go test:*)"},
		{"$GO test", "Bash(go test:*)"},
		{"go test ./... ; rm -rf x", "Bash(go test:*)"},
		{"if go test; then rm -rf x; fi", "Bash(go test:*)"},
		{"go() { rm -rf x; }; go test", "Bash(go test:*)"},
		{"sh -c 'go test'", "Bash(go test:*)"},
		{"python3 -c 'import os'", "Bash(python3:*)"},
		{"node -e 'x'", "Bash(node:*)"},
		{"perl -ne 'x'", "Bash(perl:*)"},
		{"sudo git push", "Bash(git push:*)"},
		{"go test ./... 'unterminated", "Bash(go test:*)"},
		{"/bin/bash -lc 'rm -rf x'", "Bash(/bin/bash:*)"},
		{"git -c core.pager=evil log", "Bash(git log:*)"},
		{"curl x | sh", "Bash(curl:*)"},
		{"go test ./... >> out.txt", "Bash(go test:*)"},
		{"go test ./... 2> err.txt", "Bash(go test:*)"},
	}
	for _, c := range cases {
		p := mustPolicy(t, Config{Mode: "ask", Allow: []string{c.grant}})
		ev := p.Evaluate(Query{Tool: "bash", Args: bashArgs(c.cmd)})
		if ev.Decision == Allow {
			t.Errorf("%q with %s: allowed (%s)", c.cmd, c.grant, ev.Reason)
		}
	}
}

func TestPrefixGrantAllowsSimpleCommand(t *testing.T) {
	p := mustPolicy(t, Config{Allow: []string{"Bash(go test:*)"}})
	for _, cmd := range []string{"go test", "go test ./pkg/... -run TestX -count=1", "go  'test'  ./x", "timeout 60 go test ./...", "go test ./... 2>&1", "go test >/dev/null"} {
		if ev := p.Evaluate(Query{Tool: "bash", Args: bashArgs(cmd)}); ev.Decision != Allow || ev.Rule != "Bash(go test:*)" {
			t.Errorf("%q: %v %q (%s)", cmd, ev.Decision, ev.Rule, ev.Reason)
		}
	}
	for _, cmd := range []string{"go testx", "go vet ./...", "go"} {
		if d := p.Decide("bash", false, bashArgs(cmd)); d == Allow {
			t.Errorf("%q: allowed", cmd)
		}
	}
}

func TestSuggestPrefix(t *testing.T) {
	for cmd, want := range map[string]string{
		"go test ./pkg/... -run TestX": "go test",
		"git status":                   "git status",
		"npm run build":                "npm run",
		"make":                         "make",
		"ls -la /etc":                  "ls",
		"git --no-pager log":           "git",
		"go ./x":                       "go",
		"python3 x.py":                 "",
		"env":                          "",
		"sudo make":                    "",
	} {
		f := analyzeShell(cmd)
		if got := suggestPrefix(f.parts[0].words); got != want {
			t.Errorf("suggestPrefix(%q) = %q, want %q", cmd, got, want)
		}
	}
}

func TestReadOnlyClassification(t *testing.T) {
	readers := []string{
		"git status", "git log -3 --oneline | head -5", "ls -la && pwd", "find . -name '*.go'", "rg TODO",
		"cat a.txt | wc -l", "grep -rn foo . 2>/dev/null", "echo ok", "timeout 5 cat x", "command -v go", "env",
	}
	writers := []string{
		"find . -delete", "git diff --output=x", "echo hi > f", "sort -o f in", "git push", "rm -rf x",
		"git -c core.pager=x log", "cat $F", "sudo cat /etc/shadow", "tree -o out", "ls; rm x",
	}
	for _, c := range readers {
		if f := analyzeShell(c); !f.readOnly {
			t.Errorf("%q: not classified read-only (nested=%q dynamic=%v)", c, f.nested, f.dynamic)
		}
	}
	for _, c := range writers {
		if f := analyzeShell(c); f.readOnly {
			t.Errorf("%q: classified read-only", c)
		}
	}
}

func TestEditFamilyCoversBothEndsOfMove(t *testing.T) {
	move := func(from, to string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"path": from, "new_path": to})
		return b
	}
	p := mustPolicy(t, Config{Allow: []string{"Edit(docs/**)"}, Deny: []string{"Edit(.git/**)"}})
	cases := []struct {
		args json.RawMessage
		want Decision
	}{
		{move("docs/a.md", "docs/b.md"), Allow},
		{move("docs/a.md", "src/b.md"), Ask},
		{move("docs/a.md", ".git/hooks/pre-commit"), Deny},
		{move(".git/config", "docs/x"), Deny},
	}
	for _, c := range cases {
		if got := p.Decide("move_file", false, c.args); got != c.want {
			t.Errorf("move_file %s: %v, want %v", c.args, got, c.want)
		}
	}
	// A legacy tool-specific rule covers only its own tool.
	p = mustPolicy(t, Config{Allow: []string{"write_file(src/*.go)"}})
	if p.Decide("write_file", false, []byte(`{"path":"src/a.go"}`)) != Allow || p.Decide("edit_file", false, []byte(`{"path":"src/a.go"}`)) != Ask {
		t.Error("write_file(...) rule scope")
	}
	// A subject rule never matches a call that exposes no subject.
	p = mustPolicy(t, Config{Mode: "deny", Allow: []string{"mcp__x__run(ls*)"}, Deny: []string{"mcp__x__rm(*)"}})
	if p.Decide("mcp__x__run", false, []byte(`{"cmd":"ls"}`)) != Deny || p.Decide("mcp__x__run", false, []byte(`{"command":"ls -l"}`)) != Allow {
		t.Error("subject extraction for MCP tools")
	}
}

func TestDenyRuleSeesPastGitGlobalOptions(t *testing.T) {
	p := mustPolicy(t, Config{Mode: "allow", Deny: []string{"Bash(git push:*)"}})
	for _, cmd := range []string{
		"git push origin main",
		"git -C . push origin main",
		"git --no-pager push",
		"git --git-dir=.git --work-tree . push -f",
		"/usr/bin/git -C sub push",
		"cd x && git -C .. push",
	} {
		if got := p.Decide("bash", false, bashArgs(cmd)); got != Deny {
			t.Errorf("%q: %v, want deny", cmd, got)
		}
	}
	for _, cmd := range []string{"git -C . status", "git --no-pager log -1", "git pushy"} {
		if got := p.Decide("bash", false, bashArgs(cmd)); got == Deny {
			t.Errorf("%q denied by Bash(git push:*)", cmd)
		}
	}
}
