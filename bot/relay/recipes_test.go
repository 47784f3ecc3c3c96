package relay_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/bot/relay"
	"reasonix/bot/slack"
	"reasonix/config"
	"reasonix/internal/testenv"
	"reasonix/mcp/mcptest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
	"reasonix/runner/workspace"
)

// commandRig is a relay over a service with one git workspace "w" whose
// base commit holds .reasonix/commands/review.md, and the given [[plugins]].
func commandRig(t *testing.T, plugins ...config.Plugin) *rig {
	t.Helper()
	testenv.LookPath(t, testenv.Git)
	repo := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".reasonix/commands/review.md", "---\ndescription: Review a package\nargument-hint: <package>\n---\nReview $1 and list bugs with file:line.")
	write(".reasonix/skills/triage/SKILL.md", "---\ndescription: Triage a failure\n---\nTriage $ARGUMENTS: find the cause.")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "--all"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "root"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	wm, err := workspace.New(workspace.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 1
	set.Workspaces = []config.Workspace{{Name: "w", Repo: repo, Base: "main"}}
	set.Plugins = plugins
	st := storetest.SQLite(t, store.Config{})
	prov := agenttest.NewScriptedProvider(agenttest.Turn{Text: "reviewed", Usage: agent.Usage{Prompt: 10, Completion: 1}})
	cfg := config.Bot{Slack: config.SlackBot{Enabled: true, AllowUsers: []string{alice, bob},
		AllowChannels: []string{channel}, Approvers: []string{bob}}}
	set.Bot = cfg
	svc := runnertest.Start(t, runnertest.Options{Store: st, Provider: prov, Settings: set,
		Configure: func(c *runner.Config) { c.Workspaces = runner.NewWorkspaces(wm) }})
	fake := bottest.NewSlack(t, bottest.SlackLimits{PerSecond: 10, Burst: 3})
	tr, err := slack.New(slack.Config{BotToken: "xoxb-test-secret", AppToken: "xapp-test", APIURL: fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(relay.Config{Service: svc, Store: st, Bot: cfg, Transports: []bot.Transport{tr},
		Secrets: []string{"xoxb-test-secret"}, EditInterval: 120 * time.Millisecond, ScanInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Stop(ctx); err != nil {
			t.Errorf("relay stop: %v", err)
		}
	})
	return &rig{svc: svc, st: st, slack: fake, relay: r, model: prov}
}

// A mention "/review pkg/foo" starts a task whose prompt is the command's
// rendered body, and the model receives exactly that.
func TestMentionRunsACustomCommand(t *testing.T) {
	r := commandRig(t)
	mention := r.slack.Mention(alice, channel, "", "in:w /review pkg/foo")
	var taskID string
	eventually(t, "the task", func() bool {
		id, err := r.st.ThreadTask(context.Background(), "slack", channel, mention.TS)
		taskID = id
		return err == nil
	})
	done := runnertest.WaitState(t, r.svc, taskID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	want := "Review pkg/foo and list bugs with file:line."
	if done.Prompt != want || done.Workspace != "w" {
		t.Fatalf("task = %q in %q, want %q", done.Prompt, done.Workspace, want)
	}
	reqs := r.model.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was not asked")
	}
	msgs := reqs[0].Messages
	if !strings.Contains(msgs[len(msgs)-1].Content, want) {
		t.Fatalf("model saw %q", msgs[len(msgs)-1].Content)
	}
}

// A mention "/triage …" naming a skill of the workspace's base commit
// starts a task whose prompt is the skill's rendered body, and the skill
// is in the index of the model's system prompt.
func TestMentionRunsASkill(t *testing.T) {
	r := commandRig(t)
	mention := r.slack.Mention(alice, channel, "", "in:w /triage the flaky store test")
	var taskID string
	eventually(t, "the task", func() bool {
		id, err := r.st.ThreadTask(context.Background(), "slack", channel, mention.TS)
		taskID = id
		return err == nil
	})
	done := runnertest.WaitState(t, r.svc, taskID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if want := "Triage the flaky store test: find the cause."; done.Prompt != want {
		t.Fatalf("task prompt = %q, want %q", done.Prompt, want)
	}
	reqs := r.model.Requests()
	if len(reqs) == 0 || !strings.Contains(reqs[0].Messages[0].Content, "\n- triage: Triage a failure\n") {
		t.Fatalf("the index is not in the system prompt: %+v", reqs)
	}
}

// An unknown command gets an answer naming the nearest commands and
// starts nothing; help lists the workspace's commands.
func TestUnknownCommandAndHelpInChat(t *testing.T) {
	r := commandRig(t)
	bad := r.slack.Mention(alice, channel, "", "in:w /reveiw pkg/foo")
	eventually(t, "the answer", func() bool { return strings.Contains(r.threadText(bad.TS), "did you mean /review") })
	if page, _ := r.svc.Tasks(context.Background(), store.TaskFilter{Limit: 10}); len(page.Tasks) != 0 {
		t.Fatalf("a task started: %+v", page.Tasks)
	}
	if n := len(r.model.Requests()); n != 0 {
		t.Fatalf("the model saw %d requests", n)
	}
	help := r.slack.Mention(alice, channel, "", "in:w help")
	eventually(t, "the help", func() bool {
		txt := r.threadText(help.TS)
		return strings.Contains(txt, "/review &lt;package&gt; — Review a package") || strings.Contains(txt, "/review <package> — Review a package")
	})
}

// A mention naming an MCP prompt of a [[plugins]] server starts a task
// whose prompt is the prompt's text; an unknown prompt is answered with
// the nearest name and reaches no model; help lists the prompt with its
// argument hint.
func TestMentionRunsAnMCPPrompt(t *testing.T) {
	srv := mcptest.NewHTTPPromptServer(t, "docs", []mcptest.Prompt{{
		Name: "summarize", Description: "Summarize a package", Arguments: []string{"path"},
		Text: func(args map[string]string) string { return "Summarize the package " + args["path"] + "." },
	}})
	r := commandRig(t, config.Plugin{Name: "docs", Type: "http", URL: srv.URL})

	bad := r.slack.Mention(alice, channel, "", "in:w /mcp__docs__summarise pkg/foo")
	eventually(t, "the answer", func() bool { return strings.Contains(r.threadText(bad.TS), "did you mean /mcp__docs__summarize") })
	if page, _ := r.svc.Tasks(context.Background(), store.TaskFilter{Limit: 10}); len(page.Tasks) != 0 {
		t.Fatalf("a task started: %+v", page.Tasks)
	}
	if n := len(r.model.Requests()); n != 0 {
		t.Fatalf("the model saw %d requests", n)
	}

	mention := r.slack.Mention(alice, channel, "", "in:w /mcp__docs__summarize pkg/foo")
	var taskID string
	eventually(t, "the task", func() bool {
		id, err := r.st.ThreadTask(context.Background(), "slack", channel, mention.TS)
		taskID = id
		return err == nil
	})
	done := runnertest.WaitState(t, r.svc, taskID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	want := "Summarize the package pkg/foo."
	if done.Prompt != want {
		t.Fatalf("prompt = %q, want %q", done.Prompt, want)
	}
	msgs := r.model.Requests()[0].Messages
	if got := msgs[len(msgs)-1].Content; !strings.Contains(got, want) {
		t.Fatalf("model saw %q", got)
	}

	// A mention naming the prompt in the task's thread continues the task
	// with the prompt's text.
	r.slack.Mention(alice, channel, mention.TS, "/mcp__docs__summarize pkg/bar")
	defer func() {
		if t.Failed() {
			for _, q := range r.model.Requests() {
				t.Logf("request: %+v", q.Messages[len(q.Messages)-1])
			}
			t.Logf("thread: %s", r.threadText(mention.TS))
		}
	}()
	eventually(t, "the continuation", func() bool {
		reqs := r.model.Requests()
		if len(reqs) < 2 {
			return false
		}
		msgs := reqs[1].Messages
		return strings.Contains(msgs[len(msgs)-1].Content, "Summarize the package pkg/bar.")
	})

	help := r.slack.Mention(alice, channel, "", "in:w help")
	eventually(t, "the help", func() bool {
		txt := r.threadText(help.TS)
		return strings.Contains(txt, "/review") && (strings.Contains(txt, "/mcp__docs__summarize &lt;path&gt; — Summarize a package") ||
			strings.Contains(txt, "/mcp__docs__summarize <path> — Summarize a package"))
	})
}
