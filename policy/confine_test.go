package policy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// sandboxDirs builds a workspace and an outside directory, each with a
// file, and the symlinks an agent might use to escape.
func sandboxDirs(t *testing.T) (ws, outside string) {
	t.Helper()
	return sandboxDirsIn(t, t.TempDir())
}

func sandboxDirsIn(t *testing.T, base string) (ws, outside string) {
	t.Helper()
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600))
	must(os.Symlink(outside, filepath.Join(ws, "dirlink")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "filelink")))
	must(os.Symlink(filepath.Join(outside, "missing"), filepath.Join(ws, "dangling")))
	must(os.Symlink("../outside", filepath.Join(ws, "rellink")))
	must(os.Symlink("sub", filepath.Join(ws, "inlink")))
	return ws, outside
}

func TestWritePathConfinement(t *testing.T) {
	ws, outside := sandboxDirs(t)
	c, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, Bash: "off"})
	if err != nil {
		t.Fatal(err)
	}
	escapes := []string{
		"../outside/x", "sub/../../outside/x", filepath.Join(outside, "x"), "/etc/passwd",
		"dirlink/x", "filelink", "dangling", "rellink/secret", "dirlink/../outside/x",
		"inlink/../../outside/x", "sub/../dirlink/new/deeper",
	}
	for _, p := range escapes {
		got, err := c.WritePath(p)
		if !errors.Is(err, ErrOutsideRoots) {
			t.Errorf("WritePath(%q) = %q, %v; want ErrOutsideRoots", p, got, err)
		}
	}
	inside := map[string]string{
		"a.txt":           filepath.Join(ws, "a.txt"),
		"sub/new/b.txt":   filepath.Join(ws, "sub/new/b.txt"),
		"inlink/c.txt":    filepath.Join(ws, "sub/c.txt"),
		ws + "/d.txt":     filepath.Join(ws, "d.txt"),
		"x/../e.txt":      filepath.Join(ws, "e.txt"),
		"dirlink/../ws/f": filepath.Join(ws, "f"), // dirlink/.. is base, then ws
	}
	for p, want := range inside {
		got, err := c.WritePath(p)
		if err != nil || got != want {
			t.Errorf("WritePath(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
}

func TestMoveFileDestinationIsConfinedToo(t *testing.T) {
	// move_file checks both ends with WritePath; the destination through a
	// dangling symlink must fail like any other write.
	ws, _ := sandboxDirs(t)
	c, err := NewConfinement(SandboxConfig{WorkspaceRoot: ws, Bash: "off"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WritePath("sub"); err != nil {
		t.Fatalf("source: %v", err)
	}
	if _, err := c.WritePath("dangling"); !errors.Is(err, ErrOutsideRoots) {
		t.Fatalf("destination through dangling link: %v", err)
	}
}

func TestAllowWriteAndForbidRead(t *testing.T) {
	ws, outside := sandboxDirs(t)
	env := map[string]string{"HOME": outside}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := NewConfinement(SandboxConfig{
		WorkspaceRoot: ws, Bash: "off", LookupEnv: lookup,
		AllowWrite: []string{"${SCRATCH:-" + outside + "}/scratch"},
		ForbidRead: []string{"${HOME}/secret", "~/keys"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WritePath(filepath.Join(outside, "scratch", "x")); err != nil {
		t.Errorf("allow_write: %v", err)
	}
	for _, p := range []string{filepath.Join(outside, "secret"), "filelink", "rellink/secret", filepath.Join(outside, "keys", "id")} {
		if _, err := c.ReadPath(p); !errors.Is(err, ErrForbidden) {
			t.Errorf("ReadPath(%q): %v; want ErrForbidden", p, err)
		}
	}
	if got, err := c.ReadPath("sub"); err != nil || got != filepath.Join(ws, "sub") {
		t.Errorf("ReadPath(sub) = %q, %v", got, err)
	}
	if _, err := c.ReadPath("/etc/hostname"); err != nil {
		t.Errorf("reading outside the workspace is allowed: %v", err)
	}
}

func TestNewConfinementErrors(t *testing.T) {
	lookup := func(string) (string, bool) { return "", false }
	for _, c := range []SandboxConfig{
		{},
		{WorkspaceRoot: "relative"},
		{WorkspaceRoot: "/ws", ForbidRead: []string{"${HOME}/.ssh"}, LookupEnv: lookup},
		{WorkspaceRoot: "/ws", AllowWrite: []string{"tmp"}},
		{WorkspaceRoot: "/ws", Bash: "maybe"},
	} {
		if _, err := NewConfinement(c); err == nil {
			t.Errorf("NewConfinement(%+v): no error", c)
		}
	}
}

func TestExpandVars(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for in, want := range map[string]string{
		"${HOME}/.ssh": "/home/u/.ssh", "$HOME/x": "/home/u/x", "~/.aws": "/home/u/.aws",
		"${NOPE:-/d}/x": "/d/x", "${EMPTY:-/e}": "/e", "/a$": "/a$", "/plain": "/plain",
	} {
		if got, err := expandVars(in, lookup); err != nil || got != want {
			t.Errorf("expandVars(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"${NOPE}/x", "${HOME", "${}"} {
		if _, err := expandVars(in, lookup); err == nil {
			t.Errorf("expandVars(%q): no error", in)
		}
	}
}

// An absolute path is literal: a workspace whose name holds a "$" (the
// configuration already expanded its variables) is not a variable.
func TestAbsoluteSandboxPathsAreLiteral(t *testing.T) {
	root := filepath.Join(t.TempDir(), "X=rm; $X")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := NewConfinement(SandboxConfig{WorkspaceRoot: root, ForbidRead: []string{root + "/$HOME"}, Bash: "off"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WritePath("a.txt"); err != nil {
		t.Fatalf("write inside: %v", err)
	}
}
