package recipe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func files(kv ...string) []File {
	var out []File
	for i := 0; i < len(kv); i += 2 {
		out = append(out, File{Path: kv[i], Data: []byte(kv[i+1])})
	}
	return out
}

func TestProjectOverridesUserAndNamespacesDirectories(t *testing.T) {
	user := Layer{ScopeUser, files(
		"review.md", "user review $ARGUMENTS",
		"mine.md", "only mine",
	)}
	project := Layer{ScopeProject, files(
		"review.md", "---\ndescription: Review the diff\nargument-hint: [focus]\n---\nproject review of $ARGUMENTS",
		"git/commit.md", "commit it",
		"git/sub/deep.md", "deep",
		"README.txt", "not a command",
	)}
	cs := LoadCommands(user, project)
	if got, want := cs.Names(), []string{"git:commit", "git:sub:deep", "mine", "review"}; !slices.Equal(got, want) {
		t.Fatalf("names = %v, want %v", got, want)
	}
	r, _ := cs.Lookup("review")
	if r.Scope != ScopeProject || r.Description != "Review the diff" || r.ArgumentHint != "[focus]" {
		t.Fatalf("review = %+v, want the project's with its front matter", r)
	}
	if got := r.Render([]string{"pkg/foo"}); got != "project review of pkg/foo" {
		t.Fatalf("render = %q", got)
	}
	// The other order lets the user win: precedence is layer order.
	r2, _ := LoadCommands(project, user).Lookup("review")
	if r2.Scope != ScopeUser {
		t.Fatalf("later layer did not win: %+v", r2)
	}
	if len(cs.Warnings) != 0 {
		t.Fatalf("warnings: %v", cs.Warnings)
	}
}

func TestRenderSubstitution(t *testing.T) {
	cases := []struct {
		body string
		args []string
		want string
	}{
		{"Focus on $ARGUMENTS.", []string{"a", "b"}, "Focus on a b."},
		{"first=$1 second=$2 third=$3.", []string{"x", "y"}, "first=x second=y third=."},
		{"cost $$5 and $$ARGUMENTS", []string{"z"}, "cost $5 and $ARGUMENTS"},
		{"$HOME and $0 and $ stay", []string{"a"}, "$HOME and $0 and $ stay"},
		{"ten=$10 one=$1", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "ten"}, "ten=ten one=1"},
		{"huge=$123456", []string{"a"}, "huge=$123456"},
		{"no args: [$ARGUMENTS] [$1]", nil, "no args: [] []"},
		{"trailing $", nil, "trailing $"},
		{"$1$1$ARGUMENTS", []string{"ab"}, "ababab"},
	}
	for _, c := range cases {
		cmd := NewCommand("t", "", "", ScopeProject, c.body)
		if got := cmd.Render(c.args); got != c.want {
			t.Errorf("render %q %v = %q, want %q", c.body, c.args, got, c.want)
		}
	}
}

func TestFrontMatterEdgeCases(t *testing.T) {
	ok := []struct {
		name, text, desc, hint, body string
	}{
		{"none", "just text", "", "", "just text"},
		{"crlf", "---\r\ndescription: D\r\n---\r\nbody", "D", "", "body"},
		{"quoted", "---\ndescription: \"Review: the diff\"\nargument-hint: '[x]'\n---\nb", "Review: the diff", "[x]", "b"},
		{"comments and blanks", "---\n# c\n\ndescription: D\n---\nb", "D", "", "b"},
		{"unknown keys ignored", "---\nallowed-tools: bash\ndescription: D\n---\nb", "D", "", "b"},
		{"bom", "\ufeff---\ndescription: D\n---\nb", "D", "", "b"},
		{"dashes later are body", "text\n---\nmore", "", "", "text\n---\nmore"},
		{"case-insensitive keys", "---\nDescription: D\n---\nb", "D", "", "b"},
		{"closing at eof", "---\ndescription: D\n---", "", "", ""},
	}
	for _, c := range ok {
		cs := LoadCommands(Layer{ScopeProject, files("x.md", c.text)})
		cmd, found := cs.Lookup("x")
		if c.body == "" {
			if found || len(cs.Warnings) != 1 {
				t.Errorf("%s: an empty body must be skipped with a warning, got %v %v", c.name, cmd, cs.Warnings)
			}
			continue
		}
		if !found {
			t.Errorf("%s: not loaded: %v", c.name, cs.Warnings)
			continue
		}
		if cmd.Description != c.desc || cmd.ArgumentHint != c.hint || cmd.Body != c.body {
			t.Errorf("%s: got %q %q %q", c.name, cmd.Description, cmd.ArgumentHint, cmd.Body)
		}
	}
}

func TestMalformedFilesAreSkippedWithAWarning(t *testing.T) {
	cs := LoadCommands(Layer{ScopeProject, []File{
		{Path: "unclosed.md", Data: []byte("---\ndescription: D\nbody")},
		{Path: "badline.md", Data: []byte("---\nthis is not a key value\n---\nbody")},
		{Path: "empty.md", Data: []byte("   \n")},
		{Path: "bin.md", Data: []byte{0xff, 0xfe}},
		{Path: "bad name.md", Data: []byte("x")},
		{Path: "a/b:c.md", Data: []byte("x")},
		{Path: "big.md", Data: []byte(strings.Repeat("x", MaxFileBytes+1))},
		{Path: "link.md", Refused: "a symbolic link that leaves the repository is not followed"},
		{Path: "good.md", Data: []byte("fine")},
	}})
	if got := cs.Names(); !slices.Equal(got, []string{"good"}) {
		t.Fatalf("names = %v, want only good", got)
	}
	if len(cs.Warnings) != 8 {
		t.Fatalf("warnings = %d, want 8: %v", len(cs.Warnings), cs.Warnings)
	}
	for _, w := range cs.Warnings {
		if w.Problem == "" || w.Path == "" || !strings.Contains(w.String(), "skipped") {
			t.Errorf("warning without a reason: %+v", w)
		}
	}
}

func TestCommandWord(t *testing.T) {
	cases := []struct {
		in, name, rest string
		ok             bool
	}{
		{"/review pkg/foo", "review", "pkg/foo", true},
		{"  /git:commit  -m x", "git:commit", "-m x", true},
		{"/mcp__docs__sum", "mcp__docs__sum", "", true},
		{"/tmp/x is broken", "", "", false},
		{"/ nothing", "", "", false},
		{"review", "", "", false},
		{"/ré", "", "", false},
		{"/a.b", "", "", false},
	}
	for _, c := range cases {
		name, rest, ok := CommandWord(c.in)
		if name != c.name || rest != c.rest || ok != c.ok {
			t.Errorf("CommandWord(%q) = %q %q %v, want %q %q %v", c.in, name, rest, ok, c.name, c.rest, c.ok)
		}
	}
}

func TestNearest(t *testing.T) {
	known := []string{"review", "git:commit", "deps:bump", "release"}
	if got := Nearest("reveiw", known); !slices.Equal(got, []string{"review"}) {
		t.Errorf("reveiw → %v", got)
	}
	if got := Nearest("commit", known); !slices.Equal(got, []string{"git:commit"}) {
		t.Errorf("commit → %v", got)
	}
	if got := Nearest("zzzzzz", known); got != nil {
		t.Errorf("zzzzzz → %v, want nothing", got)
	}
}

func TestReadDirRefusesSymlinksOutOfTheRepository(t *testing.T) {
	repo, outside := t.TempDir(), t.TempDir()
	dir := filepath.Join(repo, ProjectCommandsDir)
	must(t, os.MkdirAll(filepath.Join(dir, "git"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "git", "commit.md"), []byte("commit"), 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "secret.md"), []byte("stolen"), 0o644))
	must(t, os.WriteFile(filepath.Join(repo, "inrepo.md"), []byte("in repo"), 0o644))
	must(t, os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "leak.md")))
	must(t, os.Symlink(filepath.Join(repo, "inrepo.md"), filepath.Join(dir, "alias.md")))
	must(t, os.Symlink(outside, filepath.Join(dir, "outdir")))

	cs, _ := LoadDirs("", repo)
	if got := cs.Names(); !slices.Equal(got, []string{"alias", "git:commit"}) {
		t.Fatalf("names = %v", got)
	}
	var leak bool
	for _, w := range cs.Warnings {
		leak = leak || (w.Path == "leak.md" && strings.Contains(w.Problem, "symbolic link"))
	}
	if !leak {
		t.Fatalf("the outside link was not reported: %v", cs.Warnings)
	}
	for _, c := range cs.List() {
		if strings.Contains(c.Body, "stolen") {
			t.Fatalf("content from outside the repository was loaded: %+v", c)
		}
	}
}

func TestLoadDirsUserThenProject(t *testing.T) {
	home, repo := t.TempDir(), t.TempDir()
	must(t, os.MkdirAll(filepath.Join(home, UserCommandsDir), 0o755))
	must(t, os.MkdirAll(filepath.Join(repo, ProjectCommandsDir), 0o755))
	must(t, os.WriteFile(filepath.Join(home, UserCommandsDir, "review.md"), []byte("user"), 0o644))
	must(t, os.WriteFile(filepath.Join(repo, ProjectCommandsDir, "review.md"), []byte("project"), 0o644))
	cs, _ := LoadDirs(home, repo)
	if c, _ := cs.Lookup("review"); c == nil || c.Body != "project" {
		t.Fatalf("review = %+v, want the project's", c)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
