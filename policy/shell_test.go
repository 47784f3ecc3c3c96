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
