package builtin

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMoveFile(t *testing.T) {
	env, _ := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{"a.txt": "A", "b.txt": "B", "dir/c.txt": "C"})
	mv := tool(t, env, "move_file")
	got := mustCall(t, mv, map[string]any{"path": "a.txt", "new_path": "sub/deep/a2.txt"})
	if got != "moved a.txt to sub/deep/a2.txt" {
		t.Errorf("result %q", got)
	}
	if readString(t, filepath.Join(env.Workdir, "sub/deep/a2.txt")) != "A" {
		t.Error("moved content wrong")
	}
	if _, err := os.Stat(filepath.Join(env.Workdir, "a.txt")); !os.IsNotExist(err) {
		t.Error("source still exists")
	}

	wantErr(t, mv, map[string]any{"path": "b.txt", "new_path": "sub/deep/a2.txt"}, "already exists", "overwrite")
	if readString(t, filepath.Join(env.Workdir, "sub/deep/a2.txt")) != "A" || readString(t, filepath.Join(env.Workdir, "b.txt")) != "B" {
		t.Fatal("refused move changed files")
	}
	mustCall(t, mv, map[string]any{"path": "b.txt", "new_path": "sub/deep/a2.txt", "overwrite": true})
	if readString(t, filepath.Join(env.Workdir, "sub/deep/a2.txt")) != "B" {
		t.Error("overwrite did not replace")
	}

	// Directories move too, but never into themselves or onto a directory.
	mustCall(t, mv, map[string]any{"path": "dir", "new_path": "dir2"})
	if readString(t, filepath.Join(env.Workdir, "dir2/c.txt")) != "C" {
		t.Error("directory not moved")
	}
	wantErr(t, mv, map[string]any{"path": "dir2", "new_path": "dir2/inner"}, "into itself")
	wantErr(t, mv, map[string]any{"path": "sub/deep/a2.txt", "new_path": "dir2"}, "existing directory")
	wantErr(t, mv, map[string]any{"path": "nope", "new_path": "x"}, "does not exist")
	wantErr(t, mv, map[string]any{"path": "dir2", "new_path": "./dir2"}, "same file")
	wantErr(t, mv, map[string]any{"path": "dir2", "new_path": "../escaped"}, "outside the workspace")
}
