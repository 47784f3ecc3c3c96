package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// insideWorkspace makes base/ws (with a few files and a link pointing out
// of it) and base/outside, and returns the workspace.
func insideWorkspace(t testing.TB) (ws, outside string) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, "sub"), filepath.Join(ws, "build"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	return ws, outside
}

// TestShellStaysInsideProbes turns the probes of issue 10 that wrote
// outside the workspace under --auto into a table: none is proven inside.
func TestShellStaysInsideProbes(t *testing.T) {
	ws, outside := insideWorkspace(t)
	extra := filepath.Join(filepath.Dir(ws), "cache")
	notProven := []string{
		"rm -rf /abs", "rm -rf " + outside, "echo x > ../../f", "echo x > ../f", "cd /tmp && touch f", "cd .. && touch f",
		"cd sub; cd ../..; touch f", "tee /x", "echo x | tee -a ../x", "sed -i s/a/b/ /etc/x", "sed -i.bak s/a/b/ ../x",
		"sed -i'../*' s/a/b/ main.go", "cp a /tmp/b", "cp -t /tmp a", "mv /tmp/x a", "dd of=/tmp/x", "dd if=a of=/tmp/x bs=1",
		"sort -o /tmp/x a", "sort --output=/tmp/x a", "sort -o/tmp/x a", "sed -n 'w /tmp/x' a", "sed 's/a/b/w /tmp/x' a",
		"find . -fprint /tmp/x", "find . -fprintf /tmp/x %p", "find /tmp -delete", "find .. -delete", "find -L . -delete",
		"awk '{print > \"/tmp/x\"}' a", "awk '{print $0 >> \"out\"}' a", "gawk -o prof '{}' a", "git log --output=/tmp/x",
		"git diff --output /tmp/x", "git format-patch -o /tmp/p HEAD~1", "cd /tmp && git format-patch HEAD~1",
		"git config --global x.y z", "git config --system x.y z", "git config --file /tmp/c x.y z", "git config core.hooksPath /x",
		"git -C /tmp commit -m x", "git --git-dir=/tmp/r status", "git push", "git branch -f main HEAD~1", "git stash",
		"env touch /tmp/x", "timeout 5 touch /tmp/x", "nice touch /tmp/x", "nohup touch /tmp/x", "time touch /tmp/x",
		"command touch /tmp/x", "stdbuf -o0 touch /tmp/x", "ionice -c3 touch /tmp/x", "env -C /tmp touch x", "sudo touch x",
		"touch $HOME/x", "touch ~/x", "dd if=a of=~/x", "touch a=b:~/x", "touch $X", "echo x > $F", "X=1 touch x", "touch *", "touch ../*", "echo > escape/x",
		"touch escape/x", "cp a escape", "ln -s /etc l", "ln -s ../.. up", "ln /etc/passwd p", "echo x >| /tmp/x", "echo x &> /tmp/x",
		"echo x >& /tmp/x", "echo x 3> /tmp/x", "cat <> /tmp/x", "make", "go test ./...", "go run .", "go install ./...",
		"./build.sh", "./cat /etc/passwd", "python3 x.py", "npm test", "bash -c 'touch x'", "eval touch x", "echo x > .git/config",
		"touch .git/hooks/pre-commit", "sed -i s/a/b/ .git/config", "chmod +x .git/hooks/x", "echo x >.git", "tar -xzf a.tgz && echo > sub/x",
		"unzip a.zip && touch x", "tar -xf a.tar -C /tmp", "tar -cf /tmp/a.tar .", "tar xf a.tar -P", "unzip a.zip -d /tmp",
		"unzip a.zip -d ..", "patch -p1 < x.diff", "patch /etc/x x.diff", "mkdir -p /tmp/x", "truncate -s0 /tmp/x", "chmod 777 /tmp",
		"chown u /tmp/x", "rmdir ../x", "install a /usr/local/bin/a", "install -d /opt/x", "cd && touch x", "cd - && touch x",
		"cd $D && touch x", "echo $(touch /tmp/x)", "cat <(touch /tmp/x)", "f() { touch /tmp/x; }; f", "let x=1", "[[ -f x ]] && touch x",
		"go env -w GOFLAGS=x", "go fmt fmt", "gofmt -w /tmp/x.go", "go build -o /tmp/x .", "echo 'unterminated", "cp --parents a/b /tmp",
		"exec 3>/tmp/x", "git apply --unsafe-paths x.diff", "tar -xf a.tar", "unzip a.zip", "cp -r sub .", "cp -a sub ./",
		"echo x > .GIT/config", "touch sub/../.git/index", "go build -C /tmp -o out .", "mawk -W exec prog.awk a",
		"chown -R -L u sub", "install --strip-program=x -s a b", "rmdir -p " + ws + "/sub", "set -o history",
		"tar -xf a.tar --one-top-level=/tmp/x -C build", "git checkout -- ../x", "git add ../outside/x", "git rm -r ../x",
		"patch -g1 main.go x.diff", "file -C -m magic", "cd /tmp; ls; cd " + ws + "; touch x",
	}
	for _, cmd := range notProven {
		if ok, why := ShellStaysInside(cmd, ws, []string{extra}); ok {
			t.Errorf("%q: proven inside", cmd)
		} else if why == "" {
			t.Errorf("%q: refused without a reason", cmd)
		}
	}
	proven := []string{
		"echo x > out.txt", "mkdir -p build && touch build/x", "sed -i s/a/b/ main.go", "cp a b", "git commit -am msg",
		"gofmt -w .", "go build ./...", "go vet ./...", "go mod tidy", "git status && git log -3 | head", "ls -la",
		"echo x >> sub/log 2>&1", "echo x > /dev/null", "cat a > " + ws + "/b", "touch " + extra + "/x", "cd sub && touch x",
		"cd sub && echo x > y", "git format-patch HEAD~1 && cd /tmp", "rm -rf build", "rm -rf .", "mv a sub/", "cp -r sub build/ && ls", "tee out < in", "dd if=a of=b",
		"sort -o sorted a", "sed -n 'w copy' a", "sed 's/a/b/w changes' a", "find . -name '*.o' -delete", "find build -fprint list",
		"awk '{print $1}' a > col", "gawk -i inplace '{print}' a", "git log --output=log.txt", "git diff --output=d.patch",
		"git format-patch -o patches HEAD~1", "git config --get user.name", "git add -A && git commit -m x", "timeout 5 touch x",
		"env touch x", "nice -n 5 touch x", "nohup touch x", "time touch x", "command touch x", "ln -s sub/x link", "ln -s a sub/b",
		"chmod +x script.sh", "truncate -s 0 log", "mkdir x && cd x && touch y", "echo $(date) > stamp", "go build -o bin/app .",
		"tar -czf out.tgz sub", "tar -xzf a.tgz -C build", "unzip -o a.zip -d build", "patch main.go fix.diff", "set -e; touch x",
		"git checkout -b feature", "git -C sub status", "set -euo pipefail; touch x", "git add -A .", "git rm -r --cached sub",
		"git checkout main -- sub/b", "rmdir -p sub/x", "chmod -R u+w sub", "git commit -m 'fix ../../x'", "install -m 644 a build/a", "printf '%s\\n' a > f", ": > empty",
	}
	for _, cmd := range proven {
		if ok, why := ShellStaysInside(cmd, ws, []string{extra}); !ok {
			t.Errorf("%q: not proven inside: %s", cmd, why)
		}
	}
	if ok, _ := ShellStaysInside("touch x", "", nil); ok {
		t.Error("no workspace: proven inside")
	}
}
