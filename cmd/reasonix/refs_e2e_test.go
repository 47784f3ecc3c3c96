package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `run` resolves @ references: @README.md becomes its text, @../x and
// @~/.ssh/id_rsa are refused without a look, and @server:uri reads the
// plugin's resource (resources/read).
func TestRunResolvesAtReferences(t *testing.T) {
	e := newE2E(t, answer("summarized"))
	e.configure(fmt.Sprintf("\n[[plugins]]\nname = \"example\"\ncommand = %q\n", plugin))
	writeFile(t, filepath.Join(e.work, "README.md"), "# Project\nThe readme text.\n")
	writeFile(t, filepath.Join(filepath.Dir(e.work), "x"), "SIBLING SECRET")
	if err := os.MkdirAll(filepath.Join(e.home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(e.home, ".ssh", "id_rsa"), "PRIVATE KEY")
	prompt := "Summarize @README.md, @../x, @~/.ssh/id_rsa and @example:example://readme"
	if stdout, stderr, code := e.run("run", prompt); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	msgs := e.srv.Requests()[0].Messages
	got := msgs[len(msgs)-1].Content
	for _, want := range []string{prompt + "\n\n", "<reference path=\"README.md\">\n# Project\nThe readme text.\n</reference>",
		`<reference path="../x" refused=`, `<reference path="~/.ssh/id_rsa" refused=`, `<reference resource="example:example://readme">`} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "SIBLING SECRET") || strings.Contains(got, "PRIVATE KEY") {
		t.Fatalf("a refused reference's content reached the model:\n%s", got)
	}
}
