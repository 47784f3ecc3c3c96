package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var execRules = Config{Mode: "allow", Deny: []string{
	"Bash(rm:*)", "Bash(git push:*)", "Bash=curl -X DELETE http://x", "Bash(npm run build)", "Read(/etc/**)",
}}

func TestExecDenied(t *testing.T) {
	p := mustPolicy(t, execRules)
	cases := []struct {
		name string
		argv []string
		rule string
	}{
		{"rm", []string{"rm", "-rf", "x"}, "Bash(rm:*)"},
		{"rm", []string{"y", "x"}, "Bash(rm:*)"}, // a copy of rm named y
		{"rm", nil, "Bash(rm:*)"},
		{"", []string{"/usr/bin/rm", "x"}, "Bash(rm:*)"},
		{"git", []string{"git", "-C", ".", "push", "origin"}, "Bash(git push:*)"},
		{"git", []string{"git", "push"}, "Bash(git push:*)"},
		{"git", []string{"git", "rm", "f"}, "Bash(rm:*)"},
		{"curl", []string{"curl", "-X", "DELETE", "http://x"}, "Bash=curl -X DELETE http://x"},
		{"timeout", []string{"timeout", "5", "curl", "-X", "DELETE", "http://x"}, "Bash=curl -X DELETE http://x"},
		{"sh", []string{"sh", "-c", "cd x && rm y"}, "Bash(rm:*)"},
		{"env", []string{"env", "rm", "x"}, "Bash(rm:*)"},
		{"unlink", []string{"unlink", "f"}, "Bash(rm:*)"},
		{"find", []string{"find", ".", "-delete"}, "Bash(rm:*)"},
		{"xargs", []string{"xargs", "rm"}, "Bash(rm:*)"},
		{"cp", []string{"cp", "/bin/rm", "y"}, "Bash(rm:*)"},
		{"npm", []string{"npm", "run", "build"}, "Bash(npm run build)"},
		{"busybox", []string{"rm", "f"}, "Bash(rm:*)"}, // the applet argv[0] names
		{"busybox", []string{"busybox", "rm", "f"}, "Bash(rm:*)"},
		{"coreutils", []string{"rm", "f"}, "Bash(rm:*)"},
		{"busybox", []string{"ls", "f"}, ""},
		// Not denied.
		{"npm", []string{"npm", "run", "build", "--watch"}, ""},
		{"git", []string{"git", "status"}, ""},
		{"git", []string{"git", "pushy"}, ""},
		{"curl", []string{"curl", "http://x"}, ""},
		{"ls", []string{"ls", "/bin/rm"}, ""},
		{"rmdirx", []string{"rmdirx"}, ""},
		{"cat", []string{"cat", "rm"}, ""},
		{"echo", []string{"echo", "rm", "-rf", "/"}, ""},
		{"", nil, ""},
	}
	for _, c := range cases {
		rule, denied := p.ExecDenied(c.name, c.argv)
		if denied != (c.rule != "") || rule != c.rule {
			t.Errorf("ExecDenied(%q, %q) = %q, %v; want %q", c.name, c.argv, rule, denied, c.rule)
		}
	}
	var nilPolicy *Policy
	if _, denied := nilPolicy.ExecDenied("rm", []string{"rm"}); denied {
		t.Error("a nil policy denied an exec")
	}
	if _, denied := mustPolicy(t, Config{Deny: []string{"Bash", "Edit(x)"}}).ExecDenied("rm", []string{"rm"}); denied {
		t.Error("the bare Bash rule matched an exec")
	}
}

func TestDeniedCommands(t *testing.T) {
	got := mustPolicy(t, execRules).DeniedCommands()
	want := []string{"curl", "find", "git", "mv", "npm", "rm", "rmdir", "shred", "tar", "unlink", "zip"}
	if !slices.Equal(got, want) {
		t.Errorf("DeniedCommands() = %q, want %q", got, want)
	}
	if got := mustPolicy(t, Config{Deny: []string{"Bash(/usr/bin/make:*)"}}).DeniedCommands(); !slices.Equal(got, []string{"make"}) {
		t.Errorf("a rule naming a path: %q", got)
	}
	if got := mustPolicy(t, Config{Deny: []string{"Edit(x)"}}).DeniedCommands(); len(got) != 0 {
		t.Errorf("no Bash rule: %q", got)
	}
}

// FuzzExecDenied: the exec matcher never panics; a prefix rule still
// denies an argv with more trailing arguments; and for argv of plain words
// it agrees with the analyser's decision on the same simple command.
func FuzzExecDenied(f *testing.F) {
	for _, seed := range [][2]string{
		{"rm\x00-rf\x00x", "y"}, {"git\x00-C\x00.\x00push", "--force"}, {"sh\x00-c\x00rm x", "z"},
		{"curl\x00-X\x00DELETE\x00http://x", ""}, {"npm\x00run\x00build", "--x"}, {"env\x00FOO=1\x00rm", "a"},
		{"find\x00.\x00-delete", "b"}, {"cp\x00/bin/rm\x00y", ""}, {"timeout\x005\x00git\x00push", ""},
		{"xargs\x00-I{}\x00sh\x00-c\x00{}", ""}, {"busybox\x00rm\x00f", ""}, {"", ""}, {"\x00\x00", "-"},
	} {
		f.Add(seed[0], seed[1])
	}
	p := mustPolicy(f, execRules)
	f.Fuzz(func(t *testing.T, joined, more string) {
		argv := strings.Split(joined, "\x00")
		if len(argv) > 24 || len(joined) > 512 {
			return
		}
		name := ""
		if len(argv) > 0 {
			name = strings.TrimPrefix(argv[0], "/usr/bin/")
		}
		rule, denied := p.ExecDenied(name, argv)
		if denied == (rule == "") {
			t.Fatalf("ExecDenied(%q, %q) = %q, %v", name, argv, rule, denied)
		}
		if denied && strings.HasSuffix(rule, ":*)") {
			longer := append(slices.Clone(argv), strings.Fields(more)...)
			if r2, d2 := p.ExecDenied(name, longer); !d2 {
				t.Fatalf("%q denied by %s, but not with more arguments %q (%q)", argv, rule, longer, r2)
			}
		}
		words := append([]string{name}, argv[1:]...)
		if !plainCommand(words) {
			return
		}
		ev := p.Evaluate(Query{Tool: "bash", Args: bashArgs(strings.Join(words, " "))})
		analyserDenied := ev.Decision == Deny && ev.Rule != ""
		if analyserDenied != denied || denied && ev.Rule != rule {
			t.Fatalf("%q: exec matcher says %q (%v), the analyser %v %q (%s)", words, rule, denied, ev.Decision, ev.Rule, ev.Reason)
		}
	})
}

// plainCommand reports words the shell reads back as the same simple
// command: no metacharacters, quotes, expansions, assignments in command
// position or reserved words.
func plainCommand(words []string) bool {
	if len(words) == 0 || strings.Contains(words[0], "=") {
		return false
	}
	switch words[0] {
	case "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "in",
		"function", "select", "coproc", "time", "!", "[[", "]]", "{", "}":
		return false
	}
	for _, w := range words {
		if w == "" {
			return false
		}
		for _, r := range w {
			ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/-=:+,@%", r)
			if !ok {
				return false
			}
		}
	}
	return true
}

// BenchmarkExecDenied measures one exec check, as exec-time enforcement
// makes it on every execve: a plain command, a wrapper and a shell string.
func BenchmarkExecDenied(b *testing.B) {
	p := mustPolicy(b, execRules)
	argvs := [][]string{
		{"go", "test", "./...", "-run", "TestX"},
		{"timeout", "5", "git", "-C", ".", "status"},
		{"sh", "-c", "cd x && make test"},
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, argv := range argvs {
			if _, denied := p.ExecDenied(argv[0], argv); denied {
				b.Fatal(argv)
			}
		}
	}
}

func TestExecName(t *testing.T) {
	rm, err := filepath.EvalSymlinks("/bin/rm")
	if err != nil {
		t.Skip("no /bin/rm here")
	}
	dir := t.TempDir()
	data, err := os.ReadFile(rm)
	if err != nil {
		t.Fatal(err)
	}
	copyOf := filepath.Join(dir, "y")
	if err := os.WriteFile(copyOf, data, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "x")
	if err := os.Symlink(rm, link); err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(dir, "z")
	if err := os.WriteFile(changed, append(data[:len(data)-1:len(data)-1], data[len(data)-1]^1), 0o755); err != nil {
		t.Fatal(err)
	}
	p := mustPolicy(t, execRules)
	for file, want := range map[string]string{copyOf: "rm", link: "rm", rm: "rm", changed: "z", "/no/such/tool": "tool"} {
		if got := p.ExecName(file); got != want {
			t.Errorf("ExecName(%s) = %q, want %q", file, got, want)
		}
	}
	if got := mustPolicy(t, Config{}).ExecName(copyOf); got != "y" {
		t.Errorf("without deny rules: %q", got)
	}
	if rule, denied := p.ExecDenied(p.ExecName(copyOf), []string{copyOf, "f"}); !denied || rule != "Bash(rm:*)" {
		t.Errorf("the copy's exec: %q %v", rule, denied)
	}
}
