package policy_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/policy"
)

// rmSpelling is one way of deleting the file f in the current directory.
type rmSpelling struct {
	cmd string
	// setup runs first, unguarded, as the harness (an earlier call or the
	// repository's state): the spelling's call alone must be refused.
	setup string
	// needs names programs the spelling runs; when one is missing the
	// unguarded run that proves the spelling deletes is skipped.
	needs []string
	// noRun: never run unguarded (as root, `mv f /dev/null` would replace
	// the machine's /dev/null).
	noRun bool
}

const (
	rmSh      = "printf 'rm f\\n' > s.sh"
	gitRepo   = "git init -q . && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x"
	gitTracks = "git init -q . && git add f && git -c user.email=a@b -c user.name=a commit -q -m x"
)

// rmSpellings are the spellings of a denied `rm` of issues 10 and 23.
var rmSpellings = []rmSpelling{
	// The command itself, quoted and by path.
	{cmd: "rm f"}, {cmd: "/bin/rm f"}, {cmd: "/usr/bin/rm f"}, {cmd: "\\rm f"}, {cmd: "\"rm\" f"}, {cmd: "'rm' f"},
	{cmd: "r''m f"}, {cmd: "r\"\"m f"}, {cmd: "r\\m f"}, {cmd: "rm -f -- f"}, {cmd: "rm -rf f"},
	// Transparent wrappers and runners.
	{cmd: "command rm f"}, {cmd: "env rm f"}, {cmd: "env -i rm f"}, {cmd: "exec rm f"}, {cmd: "nice rm f"},
	{cmd: "nice -n 5 rm f"}, {cmd: "timeout 1 rm f"}, {cmd: "nohup rm f"}, {cmd: "time rm f"}, {cmd: "stdbuf -o0 rm f"},
	{cmd: "ionice -c 3 rm f"}, {cmd: "setsid -w rm f"}, {cmd: "sudo rm f", needs: []string{"sudo"}},
	{cmd: "flock lk rm f"}, {cmd: "flock lk -c 'rm f'"}, {cmd: "strace -o /dev/null rm f", needs: []string{"strace"}},
	{cmd: "fakeroot rm f", needs: []string{"fakeroot"}}, {cmd: "fakeroot -- rm f", needs: []string{"fakeroot"}},
	{cmd: "script -qc 'rm f' /dev/null", needs: []string{"script"}}, {cmd: "busybox rm f", needs: []string{"busybox"}},
	// Shells and eval.
	{cmd: "sh -c 'rm f'"}, {cmd: "bash -c 'rm f'"}, {cmd: "bash -c \"rm f\""}, {cmd: "eval rm f"}, {cmd: "eval 'rm f'"},
	{cmd: "echo rm f | sh"}, {cmd: "echo rm f | bash"}, {cmd: "bash <<< 'rm f'"}, {cmd: "sh <<EOF\nrm f\nEOF"},
	{cmd: "bash <(echo rm f)"}, {cmd: "source <(echo rm f)"}, {cmd: ". <(echo rm f)"}, {cmd: "bash < <(echo rm f)"},
	{cmd: "bash s.sh", setup: rmSh}, {cmd: "sh ./s.sh", setup: rmSh}, {cmd: "source s.sh", setup: rmSh},
	{cmd: ". ./s.sh", setup: rmSh}, {cmd: "./s.sh", setup: "printf '#!/bin/sh\\nrm f\\n' > s.sh && chmod +x s.sh"},
	{cmd: "bash t.sh", setup: rmSh + " && printf '. ./s.sh\\n' > t.sh"},
	{cmd: "bash t.sh", setup: "ln -s /bin/rm x && printf './x f\\n' > t.sh"},
	{cmd: rmSh + " && bash s.sh"}, {cmd: "bash s.sh", setup: rmSh + " && cp s.sh t.sh"},
	// Computed names and substitutions.
	{cmd: "$(echo rm) f"}, {cmd: "`echo rm` f"}, {cmd: "X=rm; $X f"}, {cmd: "${X:-rm} f"}, {cmd: "\"$(printf rm)\" f"},
	{cmd: "echo $(rm f)"}, {cmd: "true `rm f`"}, {cmd: "cat <(rm f)"}, {cmd: "g() { rm \"$1\"; }; g f"},
	{cmd: "trap 'rm f' EXIT"}, {cmd: "coproc rm f; wait"}, {cmd: "rm f & wait"}, {cmd: "(rm f)"}, {cmd: "{ rm f; }"},
	{cmd: "if true; then rm f; fi"}, {cmd: "true && rm f"}, {cmd: "false || rm f"}, {cmd: "for i in f; do rm $i; done"},
	// Aliases, the hash table and start-up files.
	{cmd: "shopt -s expand_aliases; alias x=rm\nx f"}, {cmd: "bash -O expand_aliases -c 'alias x=rm\nx f'"},
	{cmd: "hash -p /bin/rm x; x f"}, {cmd: "BASH_ENV=s.sh bash -c true", setup: rmSh},
	{cmd: "env BASH_ENV=s.sh bash -c true", setup: rmSh}, {cmd: "export BASH_ENV=s.sh; bash -c true", setup: rmSh},
	// Commands run by xargs and find.
	{cmd: "echo f | xargs rm"}, {cmd: "echo f | xargs -n1 rm"}, {cmd: "echo f | xargs -I{} rm {}"},
	{cmd: "echo f | xargs -I{} sh -c 'rm {}'"}, {cmd: "echo f | xargs sh -c 'rm \"$0\"'"},
	{cmd: "echo 'rm f' | xargs -I{} sh -c '{}'"}, {cmd: "echo rm f | xargs env"}, {cmd: "printf 'rm f' | xargs -0 sh -c"},
	{cmd: "find . -name f -delete"}, {cmd: "find f -delete"}, {cmd: "find . -name f -exec rm {} \\;"},
	{cmd: "find . -name f -exec rm {} +"}, {cmd: "find . -name f -execdir rm {} \\;"},
	{cmd: "find . -name f -exec sh -c 'rm \"$1\"' _ {} \\;"}, {cmd: "find . -name f -exec bash -c 'rm {}' \\;"},
	// Interpreters and tools that run commands of their own language.
	{cmd: "python3 -c 'import os; os.remove(\"f\")'", needs: []string{"python3"}},
	{cmd: "python3 -c 'import subprocess; subprocess.run([\"rm\", \"f\"])'", needs: []string{"python3"}},
	{cmd: "echo 'import os; os.remove(\"f\")' | python3", needs: []string{"python3"}},
	{cmd: "perl -e 'unlink \"f\"'", needs: []string{"perl"}}, {cmd: "perl -e 'system \"rm f\"'", needs: []string{"perl"}},
	{cmd: "node -e 'require(\"fs\").unlinkSync(\"f\")'", needs: []string{"node"}},
	{cmd: "awk 'BEGIN{system(\"rm f\")}'"}, {cmd: "awk 'BEGIN{print \"rm f\" | \"sh\"}'"},
	{cmd: "echo x | sed '1e rm f'"}, {cmd: "echo 'rm f' | sed e"},
	{cmd: "touch g && tar --checkpoint=1 --checkpoint-action=exec='rm f' -cf /dev/null g"},
	{cmd: "tar -xf a.tar --to-command='rm f'", setup: "touch g && tar -cf a.tar g"},
	// Git: aliases, configured commands, the environment.
	{cmd: "git -c alias.x='!rm f' x", setup: gitRepo}, {cmd: "git -c core.fsmonitor='rm f; false' status", setup: gitRepo},
	{cmd: "git -c core.sshCommand='rm f; false' ls-remote ssh://h/r"},
	{cmd: "git config alias.x '!rm f' && git x", setup: gitRepo}, {cmd: "git x", setup: gitRepo + " && git config alias.x '!rm f'"},
	{cmd: "git config core.fsmonitor 'rm f; false' && git status", setup: gitRepo},
	{cmd: "GIT_SSH_COMMAND='rm f; false' git ls-remote ssh://h/r"},
	{cmd: "env GIT_SSH_COMMAND='rm f; false' git ls-remote ssh://h/r"},
	{cmd: "export GIT_SSH_COMMAND='rm f; false'; git ls-remote ssh://h/r"},
	{cmd: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!rm f' git x", setup: gitRepo},
	{cmd: "git rm -q f", setup: gitTracks},
	// A copy or a link of the rm binary.
	{cmd: "ln -s /bin/rm x; ./x f"}, {cmd: "cp /bin/rm y; ./y f"}, {cmd: "./x f", setup: "ln -s /bin/rm x"},
	{cmd: "./y f", setup: "cp /bin/rm y"}, {cmd: "bin/z f", setup: "mkdir bin && cp /usr/bin/rm bin/z"},
	{cmd: "cp \"$(command -v rm)\" y && ./y f"}, {cmd: "PATH=.:$PATH x f", setup: "ln -s /bin/rm x"},
	{cmd: "install /bin/rm y && ./y f"}, {cmd: "cat /bin/rm > y && chmod +x y && ./y f"},
	{cmd: "cd sub && ./y ../f", setup: "mkdir sub && cp /bin/rm sub/y"},
	{cmd: "env PATH=$PATH:. x f", setup: "ln -s /bin/rm x"}, {cmd: "export PATH=.:/usr/bin; x f", setup: "ln -s /bin/rm x"},
	{cmd: "PATH=/usr/bin:$PWD x f", setup: "ln -s /bin/rm x"},
	{cmd: "find /usr/bin -name rm -exec cp {} y \\; ; ./y f", setup: "cp /bin/true y"},
	{cmd: "sh -c 'cp /bin/rm y; ./y f'", setup: "cp /bin/true y"},
	// Other commands that delete a file.
	{cmd: "tclsh <<< 'file delete f'", needs: []string{"tclsh"}}, {cmd: "source /dev/stdin <<< 'rm f'"},
	{cmd: "bash /dev/stdin <<< 'rm f'"}, {cmd: "find . -name f -exec unlink {} \\;"}, {cmd: "env -S 'rm f'"},
	{cmd: "dash -c 'rm f'"}, {cmd: "exec -a x rm f"}, {cmd: "ls() { rm f; }; ls"}, {cmd: "set -- rm f; \"$@\""},
	{cmd: "{rm,f}"}, {cmd: "$'rm' f"}, {cmd: "/usr/bin/r[m] f"},
	{cmd: "unlink f"}, {cmd: "shred -u f"}, {cmd: "tar --remove-files -cf a.tar f"}, {cmd: "zip -qm a.zip f", needs: []string{"zip"}}, {cmd: "mv f /dev/null", noRun: true},
}

// TestDeniedRmSpellingsUnderYolo: with deny = ["Bash(rm:*)"] under yolo no
// spelling of deleting f is allowed: each is refused with deny_rule naming
// the rule, and running each one the gate allowed (none should be) leaves
// f in place. TestRmSpellingsReallyDelete proves each spelling deletes.
func TestDeniedRmSpellingsUnderYolo(t *testing.T) {
	if len(rmSpellings) < 96 {
		t.Fatalf("%d spellings, want at least 96", len(rmSpellings))
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed to run the spellings")
	}
	p := mustPolicy(t, policy.Config{Deny: []string{"Bash(rm:*)"}})
	for _, s := range rmSpellings {
		t.Run(s.cmd, func(t *testing.T) {
			t.Parallel()
			dir := spellingDir(t, s)
			g, err := policy.NewGate(policy.GateConfig{Policy: p, Posture: policy.PostureYolo, Workdir: dir, ShellSandboxed: true})
			if err != nil {
				t.Fatal(err)
			}
			v, err := g.Authorize(context.Background(), agent.Call{Tool: "bash", Args: bashArgs(s.cmd)})
			if err != nil {
				t.Fatal(err)
			}
			if v.Allowed && !s.noRun {
				runSpelling(t, dir, s.cmd)
			}
			if _, err := os.Stat(filepath.Join(dir, "f")); err != nil {
				t.Errorf("allowed under yolo, and it deleted f: %v", err)
			}
			if v.Allowed || v.Code != agent.RefusedByRule || !strings.Contains(v.Reason, "Bash(rm:*)") {
				t.Errorf("allowed=%v code=%q, want a refusal naming Bash(rm:*): %s", v.Allowed, v.Code, v.Reason)
			}
		})
	}
}

// TestRmSpellingsReallyDelete proves the table of
// TestDeniedRmSpellingsUnderYolo honest: run unguarded, every spelling
// deletes f (those needing a missing program, or unsafe to run, aside).
func TestRmSpellingsReallyDelete(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every spelling unguarded")
	}
	for _, s := range rmSpellings {
		t.Run(s.cmd, func(t *testing.T) {
			t.Parallel()
			if s.noRun {
				t.Skip("unsafe to run unguarded")
			}
			for _, prog := range s.needs {
				if _, err := exec.LookPath(prog); err != nil {
					t.Skipf("%s is not installed", prog)
				}
			}
			dir := spellingDir(t, s)
			runSpelling(t, dir, s.cmd)
			if _, err := os.Stat(filepath.Join(dir, "f")); err == nil {
				t.Errorf("run unguarded, the spelling does not delete f")
			}
		})
	}
}

// spellingDir makes a directory holding f (and sub/f, so a spelling that
// changes directory has something to miss) and runs the spelling's setup.
func spellingDir(t *testing.T, s rmSpelling) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s.setup != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if out, err := shellIn(ctx, dir, s.setup).CombinedOutput(); err != nil {
			t.Fatalf("setup %q: %v\n%s", s.setup, err, out)
		}
	}
	return dir
}

func runSpelling(t *testing.T, dir, cmd string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, _ := shellIn(ctx, dir, cmd).CombinedOutput()
	t.Logf("ran it: %s", out)
}

// shellIn runs a script with bash in dir, with git's user and system
// configuration out of the way and a deadline for what hangs.
func shellIn(ctx context.Context, dir, script string) *exec.Cmd {
	c := exec.CommandContext(ctx, "bash", "-c", script)
	c.Dir = dir
	c.Env = []string{"HOME=" + dir, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C"}
	c.WaitDelay = time.Second
	return c
}

// TestYoloKeepsPlainCommandsUnderDeny: the deny rule refuses only what may
// hide a denied command; ordinary work, a workspace program and a script
// that run no rm, and a person's exact grant still go through under yolo.
func TestYoloKeepsPlainCommandsUnderDeny(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	setup := "mkdir -p scripts bin sub && printf 'go vet ./...\\necho ok\\n' > scripts/ci.sh && cp /bin/true bin/tool && " +
		"printf '#!/bin/sh\\necho hi\\n' > run.sh && chmod +x run.sh && ln -s /bin/echo say && " + gitRepo
	if out, err := shellIn(ctx, dir, setup).CombinedOutput(); err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	p := mustPolicy(t, policy.Config{Deny: []string{"Bash(rm:*)"}})
	for _, cmd := range []string{
		"go test ./...", "git status", "git commit -qm x", "git config user.email a@b", "git config --get core.fsmonitor",
		"git -C . log -1", "git lfs ls-files", "make", "npm test", "sh -c 'go test ./...'", "bash scripts/ci.sh",
		"./run.sh", "bin/tool", "./say hi", "cd sub && ../bin/tool", "timeout 60 go test ./...", "ls -l /bin/rm",
		"find . -name '*.go' | xargs grep -n x", "echo a | xargs -I{} echo {}", "python3 main.py", "alias ll='ls -l'",
		"echo $PATH", "env FOO=1 go test", "trap 'echo done' EXIT", "echo f | xargs sh -c 'echo \"$0\"'",
		"sh -c './run.sh'", "bash -c 'cd sub && ../bin/tool'", "timeout 5 ./run.sh",
		"export PATH=$PATH:/usr/local/go/bin && go build ./...", "PATH=/usr/local/go/bin:$PATH go vet ./...",
	} {
		g, err := policy.NewGate(policy.GateConfig{Policy: p, Posture: policy.PostureYolo, Workdir: dir, ShellSandboxed: true})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := g.Authorize(context.Background(), agent.Call{Tool: "bash", Args: bashArgs(cmd)}); err != nil || !v.Allowed {
			t.Errorf("%q under yolo: %+v %v", cmd, v, err)
		}
	}
	// A command deny rules cannot read is the person's to approve: an
	// exact grant (what an approval for the task records) lets it run.
	cmd := "python3 -c 'print(1)'"
	g, _ := policy.NewGate(policy.GateConfig{Policy: p, Posture: policy.PostureYolo, Workdir: dir, Grants: []string{"Bash=" + cmd}})
	if v, _ := g.Authorize(context.Background(), agent.Call{Tool: "bash", Args: bashArgs(cmd)}); !v.Allowed {
		t.Errorf("%q with its exact grant under yolo: %+v", cmd, v)
	}
	// Without a Bash deny rule, yolo runs it as before.
	g, _ = policy.NewGate(policy.GateConfig{Policy: mustPolicy(t, policy.Config{Deny: []string{"Edit(x/**)"}}), Posture: policy.PostureYolo})
	if v, _ := g.Authorize(context.Background(), agent.Call{Tool: "bash", Args: bashArgs(cmd)}); !v.Allowed {
		t.Errorf("%q under yolo without a Bash deny rule: %+v", cmd, v)
	}
	// Under ask with an approver, a person is asked instead.
	ev := p.Evaluate(policy.Query{Tool: "bash", Args: bashArgs(cmd), Workdir: dir})
	if ev.Decision != policy.Ask || !ev.HumanOnly || !strings.Contains(ev.DenyUnseen, "Bash(rm:*)") {
		t.Errorf("%q: %+v", cmd, ev)
	}
}
