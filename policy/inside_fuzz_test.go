package policy

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The grammar FuzzShellStaysInside builds commands from: a few writers,
// operands from a pool of paths inside and outside the workspace, and
// joins. "@" is replaced by a path, "{ROOT}" by the throwaway root.
var (
	fuzzPaths = []string{
		"a", "sub/b", "./c", "sub/../d", "sub", ".", "escape/x", "escape", "../outside/x", "../outside", "../beside",
		"sub/../../beside", "{ROOT}/outside/y", "{ROOT}/ws/e", "..", "sub/./../../outside",
	}
	fuzzCmds = []string{
		"touch @", "mkdir -p @", "rm -rf @", "echo x > @", "echo x >> @", "echo x >| @", "echo x &> @", "cp a @",
		"mv a @", "echo x | tee @", "sed -i s/a/b/ @", "dd if=a of=@ status=none", "sort -o @ a", "find @ -delete",
		"ln -s @ l", "ln -s a @", "chmod 600 @", "truncate -s0 @", "awk '{print > \"@\"}' a", "sed -n 'w @' a", "cd @",
		"cat @", "cp -r sub @", "find . -fprint @", "tar -cf @ sub", "pushd @", "timeout 5 touch @", "env touch @",
		"cd sub && touch @", "nice rm -f @", "cp -t @ a", "install -D a @", "ln a @", "(cd @ && touch z)",
		"{ echo x; } > @", "cd @ || touch z", "mkdir -p @ && cd @ && echo x > z", "git init -q @", "sed -i.bak s/a/b/ @",
		"gawk -i inplace '{print}' @", "rmdir -p @", "touch @/z", "mv @ sub/", "echo x >> @/../z",
	}
	fuzzJoins = []string{" && ", "; ", " || ", " | ", "\n"}
)

// fuzzCommand decodes data into a command of one to four parts.
func fuzzCommand(data []byte, root string) string {
	i := 0
	next := func(n int) int {
		if i >= len(data) {
			return 0
		}
		v := int(data[i]) % n
		i++
		return v
	}
	var sb strings.Builder
	for k, n := 0, 1+next(4); k < n; k++ {
		if k > 0 {
			sb.WriteString(fuzzJoins[next(len(fuzzJoins))])
		}
		p := strings.ReplaceAll(fuzzPaths[next(len(fuzzPaths))], "{ROOT}", root)
		sb.WriteString(strings.ReplaceAll(fuzzCmds[next(len(fuzzCmds))], "@", p))
	}
	return sb.String()
}

// fuzzRoot makes root/ws (the workspace, with a link to the outside) and
// root/outside with marker files.
func fuzzRoot(t *testing.T) (root, ws string) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws = filepath.Join(root, "ws")
	for name, body := range map[string]string{"ws/a": "a\n", "ws/sub/b": "b\n", "outside/x": "x\n", "outside/y": "y\n", "outside/d/z": "z\n"} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../outside", filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	return root, ws
}

// snapshot describes everything outside the workspace: the entries beside
// it and every file below outside/, with what a write would change.
func snapshot(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		out["beside:"+e.Name()] = ""
	}
	err = filepath.WalkDir(filepath.Join(root, "outside"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzShellStaysInside: whatever the classifier proves inside changes
// nothing outside the workspace when bash really runs it. Commands it does
// not prove are not run. Without -fuzz only the seeds run.
func FuzzShellStaysInside(f *testing.F) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("bash is not installed")
	}
	for _, seed := range [][]byte{
		{0, 0, 0}, {0, 3, 3}, {1, 2, 20, 0, 3, 0}, {1, 1, 20, 0, 0, 0}, {2, 5, 2, 1, 8, 3}, {0, 6, 13}, {0, 7, 0},
		{3, 0, 20, 0, 1, 3, 2, 2, 0, 3, 11, 4}, {0, 4, 29}, {0, 1, 13}, {1, 0, 14, 0, 0, 0}, {0, 14, 31}, {0, 9, 30},
		{1, 5, 21, 1, 0, 0}, {0, 13, 15}, {0, 5, 23},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		root, ws := fuzzRoot(t)
		cmd := fuzzCommand(data, root)
		if ok, _ := ShellStaysInside(cmd, ws, nil); !ok {
			return
		}
		before := snapshot(t, root)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		run := exec.CommandContext(ctx, bash, "-c", cmd)
		run.Dir = ws
		run.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", "HOME=" + filepath.Join(root, "home"), "TMPDIR=" + ws}
		out, _ := run.CombinedOutput() // failing commands are fine; writes are what count
		after := snapshot(t, root)
		for k, v := range after {
			if w, ok := before[k]; !ok || w != v {
				t.Fatalf("%q was proven inside but changed %s (%q -> %q); output: %s", cmd, k, w, v, out)
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				t.Fatalf("%q was proven inside but removed %s; output: %s", cmd, k, out)
			}
		}
	})
}

// TestFuzzHarnessSeesOutsideWrites: the snapshot the fuzz target compares
// does notice a write outside, a new file beside the workspace and a
// deletion through the link, so a wrong "inside" could not pass unseen.
func TestFuzzHarnessSeesOutsideWrites(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	for _, cmd := range []string{"echo x >> ../outside/x", "touch ../beside", "rm escape/d/z", "touch -d 2001-01-01 escape/y"} {
		root, ws := fuzzRoot(t)
		before := snapshot(t, root)
		run := exec.Command(bash, "-c", cmd)
		run.Dir = ws
		if out, err := run.CombinedOutput(); err != nil {
			t.Fatalf("%q: %v %s", cmd, err, out)
		}
		after := snapshot(t, root)
		same := len(before) == len(after)
		for k, v := range before {
			same = same && after[k] == v
		}
		if same {
			t.Errorf("%q: the snapshot did not change", cmd)
		}
	}
}
