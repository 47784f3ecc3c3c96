package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"reasonix/internal/procgroup"
)

// waitDelay bounds how long Wait keeps reading output after the command
// exited or was killed, in case something it started still holds the pipes.
const waitDelay = 2 * time.Second

// maxArgsQuoted bounds how much of a failed command line an error repeats.
const maxArgsQuoted = 200

// tailBytes is how much of a failing command's output an error quotes.
const tailBytes = 2048

// relocating are environment variables that point git at another
// repository or index, or add configuration. Inherited from a parent git
// process (a hook, say), they would make every command here act on the
// wrong repository or run a command the environment names.
var relocating = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
	"GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXEC_PATH",
	"GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "GIT_EDITOR",
	"GIT_PAGER", "GIT_PROXY_COMMAND", "GIT_ATTR_SOURCE",
}

// cleanEnv drops the relocating variables (and GIT_CONFIG_KEY_n /
// GIT_CONFIG_VALUE_n) from env.
func cleanEnv(env []string) []string {
	out := make([]string, 0, len(env)+2)
next:
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_CONFIG_KEY_") || strings.HasPrefix(kv, "GIT_CONFIG_VALUE_") {
			continue
		}
		for _, name := range relocating {
			if strings.HasPrefix(kv, name+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// Why the service's own git is hardened rather than run inside the task's
// sandbox: what a task can write that git reads as configuration is small
// and known — its worktree's .git file, its private directory
// (<common>/worktrees/<name>: commondir, gitdir, config.worktree) and any
// nested repository it creates. Git is therefore given its directories
// explicitly (from the Manager's record, never from those files), the
// layout is checked against what `git worktree add` wrote before every use
// (layout.go), and every command runs with the configuration below, which
// names nothing to execute. Running git in the sandbox would also hold,
// but costs a sandbox per command on the finish path and still needs the
// same explicit directories to be right.

// noExec is prepended to every git command line: command-line settings
// win over every file, so whatever the repository's config (or a file a
// task wrote) says, git runs no fsmonitor, hook, external diff, pager,
// credential helper or background maintenance. Filters are the one thing
// no setting can switch off wholesale (their driver names are free): a
// driver is only ever defined in the repository's own config (system and
// global config are not read, config.worktree must be unchanged), which a
// task cannot write, and staging never enters a nested repository (see
// stage), whose config a task would have written.
var noExec = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.attributesFile=/dev/null",
	"-c", "core.untrackedCache=false",
	"-c", "core.pager=cat",
	"-c", "diff.external=",
	"-c", "submodule.recurse=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
}

// local closes every transport for commands that only read and write the
// repository on disk: no remote helper, ssh, upload-pack, credential
// helper or askpass program can start.
var local = []string{"-c", "protocol.allow=never", "-c", "credential.helper=", "-c", "core.askPass="}

// network lets fetch and push use the transports a Repo URL may name and
// no other (ext::, fd:: and the rest stay closed), with upload-pack and
// receive-pack at their defaults whatever the clone's config says. These
// commands alone keep the operator's global git config (credential
// helpers, ssh settings, url rewrites): they act on the Manager's clone,
// whose config no task can write, never on a worktree.
var network = []string{
	"-c", "protocol.allow=never",
	"-c", "protocol.https.allow=always", "-c", "protocol.http.allow=always",
	"-c", "protocol.ssh.allow=always", "-c", "protocol.git.allow=always",
	"-c", "protocol.file.allow=always",
	"-c", "remote.origin.uploadpack=git-upload-pack",
	"-c", "remote.origin.receivepack=git-receive-pack",
}

// hardenedEnv is the environment for every git command but fetch and push:
// no system or global configuration or attributes, so only the
// repository's own config (which a task cannot write) and the command
// line count.
func hardenedEnv(env []string) []string {
	out := make([]string, 0, len(env)+5)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GIT_CONFIG_NOSYSTEM=") && !strings.HasPrefix(kv, "GIT_CONFIG_GLOBAL=") &&
			!strings.HasPrefix(kv, "GIT_CONFIG_SYSTEM=") && !strings.HasPrefix(kv, "GIT_ATTR_NOSYSTEM=") {
			out = append(out, kv)
		}
	}
	return append(out, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1")
}

// gitError is a git command that failed. Its message quotes the tail of
// git's stderr with credentials redacted.
type gitError struct {
	args []string
	code int // exit code, or -1 when git did not run to completion
	err  error
	tail string
}

func (e *gitError) Error() string {
	args := strings.Join(e.args, " ")
	if len(args) > maxArgsQuoted { // a long commit message, say
		args = args[:maxArgsQuoted] + "…"
	}
	msg := fmt.Sprintf("workspace: git %s: %v", args, e.err)
	if e.tail != "" {
		msg += ": " + e.tail
	}
	return redact(msg)
}

func (e *gitError) Unwrap() error { return e.err }

// exitCode reports git's exit status from an error returned by git, or -1.
func exitCode(err error) int {
	if ge, ok := errors.AsType[*gitError](err); ok {
		return ge.code
	}
	return -1
}

// git runs the git binary with args in dir (a common git directory, the
// source repository or the Manager's root — never a task's worktree: see
// gitIn) and returns its stdout with the trailing newline removed. When ctx
// ends, git's whole process group is killed.
func (m *Manager) git(ctx context.Context, dir string, args ...string) (string, error) {
	return m.run(ctx, m.gitEnv, local, dir, nil, args)
}

// runNet runs git with the operator's config, outside any repository's
// (dir is the Manager's root).
func (m *Manager) runNet(ctx context.Context, dir string, args ...string) (string, error) {
	return m.run(ctx, m.netEnv, local, dir, nil, args)
}

// gitNet is git for fetch and push on a clone: the operator's global
// config counts (credentials), and only the data transports are open.
func (m *Manager) gitNet(ctx context.Context, dir string, args ...string) (string, error) {
	return m.run(ctx, m.netEnv, network, dir, nil, args)
}

// gitIn runs git on a task's worktree with its git directory, common
// directory and work tree given explicitly (from the record, checked by
// verify), so nothing the task wrote in .git, commondir or gitdir decides
// which repository or config git uses.
func (m *Manager) gitIn(ctx context.Context, t *tree, stdin io.Reader, args ...string) (string, error) {
	env := append(append([]string(nil), m.gitEnv...),
		"GIT_DIR="+t.private, "GIT_COMMON_DIR="+t.common, "GIT_WORK_TREE="+t.dir,
		// The task's own commits are in its object directory until Finish
		// imports them (objects.go); the service's go to the shared store.
		"GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(t.private, "objects"))
	return m.run(ctx, env, local, t.dir, stdin, args)
}

func (m *Manager) run(ctx context.Context, env, transport []string, dir string, stdin io.Reader, args []string) (string, error) {
	var stdout bytes.Buffer
	if err := m.runTo(ctx, env, transport, dir, stdin, &stdout, args); err != nil {
		return "", err
	}
	return strings.TrimRight(stdout.String(), "\n"), nil
}

// runTo runs git with its output going to stdout.
func (m *Manager) runTo(ctx context.Context, env, transport []string, dir string, stdin io.Reader, stdout io.Writer, args []string) error {
	var stderr bytes.Buffer
	argv := make([]string, 0, 2+len(noExec)+len(m.protected)+len(transport)+len(args))
	argv = append(append(append(append(append(argv, "-C", dir), noExec...), m.protected...), transport...), args...)
	cmd := exec.CommandContext(ctx, m.gitPath, argv...)
	cmd.Env = env
	cmd.Stdin = stdin
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	procgroup.Detach(cmd)
	cmd.Cancel = func() error { return procgroup.Kill(cmd) }
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	if err != nil {
		code := -1
		if ee, ok := errors.AsType[*exec.ExitError](err); ok && ctx.Err() == nil {
			code = ee.ExitCode()
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		return &gitError{args: args, code: code, err: err, tail: tail(stderr.Bytes())}
	}
	return nil
}

// tail returns the last tailBytes of out, trimmed, on one logical unit.
func tail(out []byte) string {
	out = bytes.TrimSpace(out)
	if len(out) > tailBytes {
		out = append([]byte("…"), out[len(out)-tailBytes:]...)
	}
	return string(out)
}
