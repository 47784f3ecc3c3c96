package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileNumbersLines(t *testing.T) {
	env, _ := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{"a.txt": "one\r\ntwo\nthree"})
	rf := tool(t, env, "read_file")
	want := "     1\tone\n     2\ttwo\n     3\tthree\n"
	if got := mustCall(t, rf, map[string]any{"path": "a.txt"}); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Absolute paths work as well as relative ones.
	if got := mustCall(t, rf, map[string]any{"path": filepath.Join(env.Workdir, "a.txt")}); got != want {
		t.Errorf("absolute: got %q", got)
	}
}

func TestReadFileWindowAndTrailer(t *testing.T) {
	env, _ := testEnv(t)
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	writeTree(t, env.Workdir, map[string]string{"a.txt": b.String()})
	rf := tool(t, env, "read_file")
	got := mustCall(t, rf, map[string]any{"path": "a.txt", "offset": 4, "limit": 3})
	want := "     4\tline 4\n     5\tline 5\n     6\tline 6\n\n[showing lines 4-6 of 10; call read_file with offset=7 to read on]"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// The last window has no trailer.
	got = mustCall(t, rf, map[string]any{"path": "a.txt", "offset": 9})
	if got != "     9\tline 9\n    10\tline 10\n" {
		t.Errorf("last window = %q", got)
	}
	wantErr(t, rf, map[string]any{"path": "a.txt", "offset": 11}, "past the end", "10 lines")
	wantErr(t, rf, map[string]any{"path": "a.txt", "offset": -1}, "offset")
}

func TestReadFileDefaultLimitIs2000Lines(t *testing.T) {
	env, _ := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{"a.txt": strings.Repeat("x\n", 2500)})
	got := mustCall(t, tool(t, env, "read_file"), map[string]any{"path": "a.txt"})
	if !strings.Contains(got, "  2000\tx\n") || strings.Contains(got, "  2001\t") {
		t.Errorf("window does not end at line 2000: ...%q", got[len(got)-200:])
	}
	if !strings.HasSuffix(got, "[showing lines 1-2000 of 2500; call read_file with offset=2001 to read on]") {
		t.Errorf("trailer: ...%q", got[len(got)-120:])
	}
}

func TestReadFileCutsLongLinesAndBoundsOutput(t *testing.T) {
	env, _ := testEnv(t)
	long := strings.Repeat("é", 3000) // 6000 bytes
	writeTree(t, env.Workdir, map[string]string{
		"long.txt": "short\n" + long + "\nend\n",
		"wide.txt": strings.Repeat(strings.Repeat("y", 1000)+"\n", 200),
	})
	rf := tool(t, env, "read_file")
	got := mustCall(t, rf, map[string]any{"path": "long.txt"})
	lines := strings.Split(got, "\n")
	if len(lines[1]) > 2100 || !strings.Contains(lines[1], "[... line cut: 4000 more bytes]") {
		t.Errorf("long line not cut as expected: %d bytes, %q", len(lines[1]), lines[1][len(lines[1])-60:])
	}
	if !strings.Contains(got, "     3\tend") {
		t.Errorf("line after the long one missing: %q", got[len(got)-40:])
	}
	got = mustCall(t, rf, map[string]any{"path": "wide.txt"})
	if len(got) > readMaxBytes+200 {
		t.Errorf("window is %d bytes, want about %d at most", len(got), readMaxBytes)
	}
	if !strings.Contains(got, "output size limit") || !strings.Contains(got, "offset=") {
		t.Errorf("no continuation trailer: %q", got[len(got)-150:])
	}
}

func TestReadFileRefusals(t *testing.T) {
	env, g := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{"bin.dat": "abc\x00def", "empty.txt": "", "secret.env": "TOKEN=1", "d/x": "x"})
	rf := tool(t, env, "read_file")
	wantErr(t, rf, map[string]any{"path": "d"}, "is a directory", "ls")
	wantErr(t, rf, map[string]any{"path": "bin.dat"}, "binary")
	wantErr(t, rf, map[string]any{"path": "missing.txt"}, "read_file", "no such file")
	g.hidden["secret.env"] = true
	wantErr(t, rf, map[string]any{"path": "secret.env"}, "hidden by policy")
	if got := mustCall(t, rf, map[string]any{"path": "empty.txt"}); !strings.Contains(got, "empty") {
		t.Errorf("empty file: %q", got)
	}
}

func TestReadFileFollowsSymlinkInsideWorkspaceOnly(t *testing.T) {
	env, _ := testEnv(t)
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret": "s3cret"})
	writeTree(t, env.Workdir, map[string]string{"real.txt": "hello"})
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(env.Workdir, "escape")); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	if err := os.Symlink("real.txt", filepath.Join(env.Workdir, "alias")); err != nil {
		t.Fatal(err)
	}
	rf := tool(t, env, "read_file")
	wantErr(t, rf, map[string]any{"path": "escape"}, "outside the workspace")
	if got := mustCall(t, rf, map[string]any{"path": "alias"}); !strings.Contains(got, "hello") {
		t.Errorf("alias = %q", got)
	}
}
