package workspace

import "path/filepath"

// repoLockName is the file in a repository's common git directory that
// processes sharing the repository lock (see Manager.lock). git ignores
// files it does not know there.
const repoLockName = "reasonix-workspace.lock"

func repoLockPath(repo string) string { return filepath.Join(repo, repoLockName) }
