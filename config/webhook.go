package config

import (
	"strings"

	"reasonix/internal/posture"
)

// The webhook kinds: how a [[webhooks]] entry authenticates its sender.
const (
	// WebhookGitHub verifies X-Hub-Signature-256 and reads X-GitHub-Event.
	WebhookGitHub = "github"
	// WebhookHMAC verifies Standard Webhooks headers (webhook-id,
	// webhook-timestamp, webhook-signature).
	WebhookHMAC = "hmac"
	// WebhookGitLab compares X-Gitlab-Token with the secret (constant
	// time) and reads the payload's object_kind.
	WebhookGitLab = "gitlab"
)

// Webhook is one [[webhooks]] entry: POST /hooks/<name> starts a task when
// a signed delivery passes its events and filter. The payload is untrusted
// data; nothing in it can change how the task runs.
type Webhook struct {
	Name string `toml:"name"` // required, unique; the URL path segment
	Kind string `toml:"kind"` // "github", "gitlab" or "hmac"; required
	// SecretEnv names the variable holding the signing secret; required.
	// SecretsEnv names further secrets that also verify, for rotation.
	SecretEnv  string   `toml:"secret_env"`
	SecretsEnv []string `toml:"secrets_env"`
	// Events lists the deliveries that start a task: GitHub's
	// X-GitHub-Event, alone or with the payload's action
	// ("check_run.completed"); for hmac the payload's "type"; for gitlab
	// its "object_kind" ("pipeline", "issue", "note"). Empty accepts every
	// event (GitHub's ping is always answered 204).
	Events []string `toml:"events"`
	// Filter is an optional condition on the payload, e.g.
	// `check_run.conclusion == "failure" && repository.name != "docs"`.
	Filter string `toml:"filter"`
	// Prompt is a Go text/template executed over the payload; its output
	// reaches the task inside a delimited block of untrusted data. Required.
	Prompt string `toml:"prompt"`
	// Command names a custom command whose body, with the fixed Args, is
	// the task's prompt; the rendered Prompt, if any, follows it as the
	// delimited payload. Nothing from the payload reaches the arguments.
	Command   string   `toml:"command"`
	Args      []string `toml:"args"`
	Workspace string   `toml:"workspace"` // a [[workspaces]] name; "" is a scratch directory
	Goal      bool     `toml:"goal"`      // run as a goal
	// BudgetUSD is, with Goal, the goal's cost budget per slice; 0 means
	// [agent] goal_budget_usd. Fixed here: a payload cannot raise it.
	BudgetUSD float64 `toml:"budget_usd"`
	// Posture is the posture of the webhook's tasks: ask (default) or auto.
	// yolo is refused: whoever holds the secret would control the host.
	Posture posture.Posture `toml:"posture"`
	Notify  []NotifyTarget  `toml:"notify"`
	// ApprovalTTL is how long its tasks' approval requests wait for an
	// answer; 0 means [runner] approval_ttl, NoTTL no deadline.
	ApprovalTTL TTL `toml:"approval_ttl"`

	// Source is the file that declared the entry.
	Source string `toml:"-"`
}

// SecretVars is every variable a secret of w is read from, SecretEnv first.
func (w *Webhook) SecretVars() []string {
	return append([]string{w.SecretEnv}, w.SecretsEnv...)
}

func (w *Webhook) applyDefaults() {
	if w.Posture == "" {
		w.Posture = posture.Ask
	}
}

func (w *Webhook) validate(c *Config, label string, p *problems) {
	src := w.Source
	checkEntryTTL(p, src, label+".approval_ttl", w.ApprovalTTL)
	if w.Name == "" {
		p.add(src, label+".name", "is required")
	} else if !validEntryName(w.Name) {
		p.add(src, label+".name", "%q must start with a letter or digit and contain only letters, digits, '.', '_' or '-'", w.Name)
	}
	checkOneOf(p, src, label+".kind", w.Kind, WebhookGitHub, WebhookGitLab, WebhookHMAC)
	if w.SecretEnv == "" {
		p.add(src, label+".secret_env", "is required: the name of the variable holding the signing secret")
	}
	checkEnvName(p, src, label+".secret_env", w.SecretEnv)
	for _, v := range w.SecretsEnv {
		checkEnvName(p, src, label+".secrets_env", v)
	}
	for i, e := range w.Events {
		if strings.TrimSpace(e) == "" || strings.ContainsAny(e, " \t") {
			p.add(src, label+".events", "entry %d must be an event name such as \"check_run.completed\"", i)
		}
	}
	if strings.TrimSpace(w.Prompt) == "" && w.Command == "" {
		p.add(src, label+".prompt", "is required: a text/template over the payload (or name a command)")
	}
	checkCommand(p, src, label, w.Command, w.Args)
	if w.Workspace != "" && !c.hasWorkspace(w.Workspace) {
		p.add(src, label+".workspace", "%q is not a [[workspaces]] name", w.Workspace)
	}
	checkUSD(p, src, label+".budget_usd", w.BudgetUSD)
	if w.BudgetUSD > 1e6 { // the runner takes no task budget above this
		p.add(src, label+".budget_usd", "must be at most 1000000 USD (got %g)", w.BudgetUSD)
	}
	if w.BudgetUSD > 0 && !w.Goal {
		p.add(src, label+".budget_usd", "is a goal's cost budget; set goal = true (or bound every task with [runner] max_cost_per_task)")
	}
	switch w.Posture {
	case posture.Ask, posture.Auto:
	case posture.Yolo:
		p.add(src, label+".posture", "yolo is not allowed for webhooks: whoever can sign a delivery would run anything; use ask or auto")
	default:
		p.add(src, label+".posture", "%q is not ask or auto", w.Posture)
	}
	checkNotify(p, src, label+".notify", w.Notify)
}
