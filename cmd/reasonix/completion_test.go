package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// complete runs the generated bash completion for the words typed so far
// (the last one being completed) and returns the candidates.
func complete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + w + "'"
	}
	prog := fmt.Sprintf("source %s\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\n_reasonix\necho \"${COMPREPLY[@]}\"\n",
		script, strings.Join(quoted, " "), len(words)-1)
	out, err := exec.Command("bash", "--norc", "--noprofile", "-c", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

func TestBashCompletionFollowsTheTable(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	var buf bytes.Buffer
	if code := cli([]string{"completion", "bash"}, &buf, &buf); code != exitOK {
		t.Fatalf("completion bash: exit %d\n%s", code, buf.String())
	}
	script := filepath.Join(t.TempDir(), "reasonix.bash")
	if err := os.WriteFile(script, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		words []string
		want  string
	}{
		{[]string{"reasonix", "ta"}, "tasks"},
		{[]string{"reasonix", "tasks", "su"}, "submit"},
		{[]string{"reasonix", "approvals", "allow", "--s"}, "--scope --server"},
		{[]string{"reasonix", "run", "--po"}, "--posture"},
		{[]string{"reasonix", "run", "fix", "it", "--wo"}, "--workspace"},
		{[]string{"reasonix", "completion", "f"}, "fish"},
		{[]string{"reasonix", "help", "ap"}, "approvals"},
		{[]string{"reasonix", "tasks", "list", "--po"}, ""},
	}
	for _, c := range cases {
		if got := strings.Join(complete(t, script, c.words...), " "); got != c.want {
			t.Errorf("completing %q: %q, want %q", c.words, got, c.want)
		}
	}
}

func TestZshAndFishCompletionCoverEveryCommand(t *testing.T) {
	for _, shell := range []string{"zsh", "fish"} {
		out, stderr, code := cliRun("completion", shell)
		if code != exitOK {
			t.Fatalf("completion %s: exit %d %s", shell, code, stderr)
		}
		for _, path := range everyCommand() {
			if !strings.Contains(out, path[len(path)-1]) {
				t.Errorf("%s completion lacks %q", shell, path)
			}
			for _, f := range ownFlags(path) {
				spelled := f
				if shell == "fish" {
					spelled = "-l " + strings.TrimPrefix(f, "--")
					if !strings.HasPrefix(f, "--") {
						spelled = "-s " + strings.TrimPrefix(f, "-")
					}
				}
				if !strings.Contains(out, spelled) {
					t.Errorf("%s completion lacks %s of %q", shell, spelled, path)
				}
			}
		}
		if _, err := exec.LookPath(shell); err == nil {
			script := filepath.Join(t.TempDir(), "c")
			os.WriteFile(script, []byte(out), 0o644)
			check := exec.Command(shell, "-n", script)
			if shell == "fish" {
				check = exec.Command(shell, "--no-execute", script)
			}
			if msg, err := check.CombinedOutput(); err != nil {
				t.Errorf("%s rejects the script: %v\n%s", shell, err, msg)
			}
		}
	}
}
