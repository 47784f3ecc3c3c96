package config

import (
	"path/filepath"
	"strings"
)

// Workspace is one [[workspaces]] entry: a repository tasks can run in. Each
// task gets its own git worktree of Repo at Base.
type Workspace struct {
	Name string `toml:"name"` // required, unique
	// Repo is a git URL or a local path; a relative local path is resolved
	// against the config file that set it.
	Repo  string   `toml:"repo"`
	Base  string   `toml:"base"`  // branch or ref worktrees start from; default "main"
	Setup []string `toml:"setup"` // shell commands run in a fresh worktree, in order
	// PluginsFromWorkspace lets the repository's own .mcp.json add servers
	// (also requires [serve] allow_workspace_plugins); default false.
	PluginsFromWorkspace bool `toml:"plugins_from_workspace"`
	// Publish, when set, hands a succeeded task's branch over to a forge
	// ([workspaces.publish]); nil keeps it on the server only.
	Publish *Publish `toml:"publish"`
	// RequireSecondApprover turns [runner] require_second_approver on for
	// this workspace's tasks (it cannot turn it off); default false.
	RequireSecondApprover bool `toml:"require_second_approver"`
	// AllowReviewers are the forge accounts ("github:<login>",
	// "gitlab:<username>") whose review comments on this workspace's pull
	// requests steer their task, besides anyone the forge gives write
	// access or more. The forge account is not a chat identity: it is
	// matched only against the author the signed delivery names.
	AllowReviewers []string `toml:"allow_reviewers"`
	// MaxParallel is how many of this workspace's tasks may run at once,
	// across all nodes (each task has its own worktree and branch); 0,
	// the default, means the node's workers ([runner]
	// max_concurrent_tasks), 1 one task at a time.
	MaxParallel int `toml:"max_parallel"`

	// Source is the file that declared the entry.
	Source string `toml:"-"`
}

func (w *Workspace) applyDefaults() {
	if w.Base == "" {
		w.Base = "main"
	}
	if w.Repo != "" && !isRemoteRepo(w.Repo) {
		w.Repo = resolveFrom(w.Repo, w.Source)
	}
	if w.Publish != nil {
		w.Publish.applyDefaults(w)
	}
}

// isRemoteRepo reports whether repo is a git URL (scheme://... or the scp
// form user@host:path) rather than a local path.
func isRemoteRepo(repo string) bool {
	if strings.Contains(repo, "://") {
		return true
	}
	at, colon := strings.Index(repo, "@"), strings.Index(repo, ":")
	return at > 0 && colon > at && !filepath.IsAbs(repo)
}

func (w *Workspace) validate(label string, p *problems) {
	if w.Name == "" {
		p.add(w.Source, label+".name", "is required")
	} else if !validEntryName(w.Name) {
		p.add(w.Source, label+".name", "%q must start with a letter or digit and contain only letters, digits, '.', '_' or '-'", w.Name)
	}
	if strings.TrimSpace(w.Repo) == "" {
		p.add(w.Source, label+".repo", "is required (a git URL or a local path)")
	}
	if strings.TrimSpace(w.Base) == "" {
		p.add(w.Source, label+".base", "must not be empty")
	}
	checkStrings(p, w.Source, label+".setup", w.Setup)
	if w.MaxParallel < 0 {
		p.add(w.Source, label+".max_parallel", "must not be negative (got %d; 0 means the node's workers)", w.MaxParallel)
	}
	for _, r := range w.AllowReviewers {
		forge, user, _ := strings.Cut(r, ":")
		if (forge != "github" && forge != "gitlab") || strings.TrimSpace(user) == "" || strings.ContainsAny(user, " \t\n/:@") {
			p.add(w.Source, label+".allow_reviewers", "%q: want github:<login> or gitlab:<username>", r)
		}
	}
	if w.Publish != nil {
		w.Publish.validate(w.Source, label, w.Repo, p)
	}
}

// hasWorkspace reports whether a [[workspaces]] entry is called name; the
// entries that point tasks at a workspace check their name with it.
func (c *Config) hasWorkspace(name string) bool {
	for _, w := range c.Workspaces {
		if w.Name == name {
			return true
		}
	}
	return false
}
