package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/config"
)

func TestScanReferences(t *testing.T) {
	got := ScanReferences("see @README.md, @pkg/ and (@a.go). mail me@example.com @docs:file:///x @x:y @README.md @ @\"q\"")
	var texts []string
	for _, r := range got {
		texts = append(texts, r.Text+"|"+r.Server+"|"+r.URI)
	}
	want := []string{"README.md||", "pkg/||", "a.go||", "docs:file:///x|docs|file:///x", "x:y||", "\"q||"}
	if strings.Join(texts, " ") != strings.Join(want, " ") {
		t.Fatalf("refs = %q, want %q", texts, want)
	}
}

// @ references become tagged blocks after the prompt: a file's text, a
// directory's listing; ../, ~, a link out of the workspace, forbid_read
// and a Read deny rule are refused without their content; a path that
// does not exist stays plain text.
func TestExpandReferences(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("OUTSIDE SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	set := config.Default()
	set.Permissions.Deny = append(set.Permissions.Deny, "Read(private/**)")
	var events []agent.Event
	var ws string
	s := newSession(t, set, func(c *Config) {
		ws = c.Workdir
		c.Settings.Sandbox.ForbidRead = append(c.Settings.Sandbox.ForbidRead, filepath.Join(ws, "hidden.txt"))
		c.Observer = func(e agent.Event) { events = append(events, e) }
	})
	for name, body := range map[string]string{"README.md": "# Hello\n", "pkg/a.go": "package pkg\n", "hidden.txt": "HIDDEN",
		"private/key": "PRIVATE"} {
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	prompt := "Fix @README.md using @pkg/ and @../x, @~/.ssh/id_rsa, @link.txt, @hidden.txt, @private/key, @" + outside + ", @missing.md"
	got := s.ExpandReferences(t.Context(), prompt)
	if !strings.HasPrefix(got, prompt+"\n\n") {
		t.Fatalf("the prompt's own text changed:\n%s", got)
	}
	for _, want := range []string{
		"<reference path=\"README.md\">\n# Hello\n</reference>",
		"<reference path=\"pkg/\" kind=\"directory\">\na.go\n</reference>",
		`<reference path="../x" refused=`, `<reference path="~/.ssh/id_rsa" refused=`, `<reference path="link.txt" refused=`,
		`<reference path="hidden.txt" refused=`, `<reference path="private/key" refused="a deny rule covers it"/>`,
		`<reference path="` + outside + `" refused=`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("expansion lacks %q:\n%s", want, got)
		}
	}
	for _, leak := range []string{"OUTSIDE SECRET", "HIDDEN", "PRIVATE", `path="missing.md"`} {
		if strings.Contains(got, leak) {
			t.Errorf("expansion holds %q:\n%s", leak, got)
		}
	}
	if len(events) != 1 || events[0].Type != EventReferences {
		t.Fatalf("events = %+v", events)
	}
	if plain := "no references here, mail a@b.c"; s.ExpandReferences(t.Context(), plain) != plain {
		t.Error("a prompt without references changed")
	}
}

// FuzzScanReferences: the scanner never panics; every reference is text
// the prompt holds right after an @ that starts a word, without white
// space, and a resource's parts rebuild its text.
func FuzzScanReferences(f *testing.F) {
	for _, s := range []string{"@README.md", "x @../x y", "@~/.ssh/id_rsa", "a@b.c", "@srv:file:///etc/passwd", "@@@", "@\xff\xfe",
		"(@a) @b. @c,", "@ \t@\n@x", "@" + strings.Repeat("a", 2000), "@a:b:c:d", "@\u00a0x @é/ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		refs := ScanReferences(s)
		if len(refs) > maxReferences {
			t.Fatalf("%d references", len(refs))
		}
		for _, r := range refs {
			if r.Text == "" || strings.IndexFunc(r.Text, func(c rune) bool { return c == ' ' || c == '\n' || c == '\t' }) >= 0 {
				t.Fatalf("reference %q", r.Text)
			}
			if !strings.Contains(s, "@"+r.Text) {
				t.Fatalf("reference %q not after an @ in %q", r.Text, s)
			}
			if r.Server != "" && r.Server+":"+r.URI != r.Text {
				t.Fatalf("resource %+v", r)
			}
		}
	})
}
