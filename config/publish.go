package config

import (
	"net/url"
	"strings"
	"time"
)

// Publish modes: what happens to a task's branch when the task succeeded
// with changes.
const (
	PublishPR     = "pr"     // push the branch and open a pull (merge) request
	PublishDraft  = "draft"  // the same, as a draft
	PublishBranch = "branch" // push the branch only
	PublishOff    = "off"    // keep the branch on the server, as without a [workspaces.publish]
	// PublishAsk pushes the branch and opens the pull request once a
	// person allowed it (an approval "Open pull request").
	PublishAsk = "ask"
)

// Defaults of [workspaces.publish].
const (
	DefaultCITimeout     = 45 * time.Minute
	DefaultCIFixAttempts = 2
	maxCIFixAttempts     = 10
)

// Publish is a workspace's [workspaces.publish] table: where a finished
// task's branch is pushed and the pull request opened. The token is named
// by TokenEnv and read only by the service; it never reaches a task.
type Publish struct {
	Forge   string `toml:"forge"`   // "github" (also Enterprise Server) or "gitlab"; required
	APIURL  string `toml:"api_url"` // "" = https://api.github.com or https://gitlab.com/api/v4
	Project string `toml:"project"` // owner/repo, or the GitLab project's full path; required
	// TokenEnv names the variable holding the forge token; required.
	TokenEnv string `toml:"token_env"`
	// PushURL is the git URL the branch is pushed to; "" = the workspace's
	// repo, which must then be a URL.
	PushURL string   `toml:"push_url"`
	Mode    string   `toml:"mode"`   // pr (default), draft, ask, branch or off
	Base    string   `toml:"base"`   // the branch PRs target; "" = the workspace's base
	Labels  []string `toml:"labels"` // added to every PR
	// WaitCI makes CI on the head commit the task's completion contract
	// (the runner's waiting_ci): CITimeout bounds the wait for a verdict
	// on one commit, CIFixAttempts the failures fed back to the task.
	WaitCI        bool          `toml:"wait_ci"`
	CITimeout     time.Duration `toml:"ci_timeout"`      // default "45m"
	CIFixAttempts *int          `toml:"ci_fix_attempts"` // default 2; 0 = no fix attempts
}

// Enabled reports whether tasks of the workspace publish their branch.
func (p *Publish) Enabled() bool { return p != nil && p.Mode != PublishOff }

// FixAttempts is CIFixAttempts with its default.
func (p *Publish) FixAttempts() int {
	if p == nil || p.CIFixAttempts == nil {
		return DefaultCIFixAttempts
	}
	return *p.CIFixAttempts
}

func (p *Publish) applyDefaults(w *Workspace) {
	p.Forge = strings.ToLower(strings.TrimSpace(p.Forge))
	p.Mode = strings.ToLower(strings.TrimSpace(p.Mode))
	if p.Mode == "" {
		p.Mode = PublishPR
	}
	if p.Base == "" {
		p.Base = w.Base
	}
	if p.PushURL == "" && isRemoteRepo(w.Repo) {
		p.PushURL = w.Repo
	}
	if p.CITimeout == 0 {
		p.CITimeout = DefaultCITimeout
	}
}

func (p *Publish) validate(src, label string, repo string, pr *problems) {
	label += ".publish"
	switch p.Mode {
	case PublishPR, PublishDraft, PublishAsk, PublishBranch, PublishOff:
	default:
		pr.add(src, label+".mode", `%q is not one of pr, draft, ask, branch, off`, p.Mode)
	}
	if p.Mode == PublishOff {
		return // the rest may be half filled in while publishing is switched off
	}
	switch p.Forge {
	case "github", "gitlab":
	case "":
		pr.add(src, label+".forge", `is required ("github" or "gitlab")`)
	default:
		pr.add(src, label+".forge", `%q is not one of github, gitlab`, p.Forge)
	}
	if p.APIURL != "" {
		if u, err := url.Parse(p.APIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			pr.add(src, label+".api_url", "must be an http(s) URL such as https://api.github.com")
		} else if u.User != nil {
			pr.add(src, label+".api_url", "must not hold credentials; name the token's variable in token_env")
		}
	}
	project := strings.Trim(strings.TrimSpace(p.Project), "/")
	if parts := strings.Split(project, "/"); project == "" || len(parts) < 2 || (p.Forge == "github" && len(parts) != 2) {
		pr.add(src, label+".project", "must be owner/repo (GitLab: the project's full path, group/name)")
	}
	if p.TokenEnv == "" {
		pr.add(src, label+".token_env", "is required: the NAME of the variable holding the forge token")
	}
	checkEnvName(pr, src, label+".token_env", p.TokenEnv)
	switch {
	case p.PushURL == "":
		pr.add(src, label+".push_url", "is required when the workspace's repo (%s) is a local path: the git URL to push to", repo)
	case strings.Contains(p.PushURL, "://"):
		u, err := url.Parse(p.PushURL)
		if err != nil {
			pr.add(src, label+".push_url", "is not a URL") // the text could hold a password: not echoed
		} else if _, hasPass := u.User.Password(); hasPass {
			pr.add(src, label+".push_url", "must not hold a password; the token from token_env authenticates the push")
		}
	}
	if strings.TrimSpace(p.Base) == "" {
		pr.add(src, label+".base", "must not be empty")
	}
	checkStrings(pr, src, label+".labels", p.Labels)
	if p.CITimeout < 0 {
		pr.add(src, label+".ci_timeout", "must not be negative (got %s)", p.CITimeout)
	}
	if p.CIFixAttempts != nil {
		checkRange(pr, src, label+".ci_fix_attempts", *p.CIFixAttempts, 0, maxCIFixAttempts)
	}
}
