// Package workspace prepares the directory each runner task works in and
// turns what the task changed into a commit.
//
// A task that names a configured workspace gets a git worktree of that
// repository on its own branch, reasonix/<task-id>, started from the
// workspace's base ref; when the task ends, every change in the worktree is
// committed on that branch and the result reports `git diff --stat` against
// the base. A task without a workspace gets an empty scratch directory.
//
// Everything lives under one root directory owned by the Manager:
//
//	<root>/scratch/<task-id>    scratch directories
//	<root>/worktrees/<task-id>  git worktrees
//	<root>/repos/<name>         bare clones of workspaces whose repo is a URL
//	<root>/meta/<task-id>.json  what Prepare made, so Finish and Remove work
//	                            after a restart
//
// The package runs the real git binary. Tasks of one repository run side
// by side: each has its own worktree, branch, index and object directory,
// and commits there without waiting. The git commands on what they share —
// adding and removing worktrees, fetching the base, importing a task's
// objects into the repository's store — are serialized per repository by
// the Manager (git's own lock files make such concurrent updates fail
// rather than wait), across processes too for a repository outside the
// root; different repositories proceed in parallel. Nothing here writes to the user's global
// git configuration: a commit identity is passed per command.
package workspace
