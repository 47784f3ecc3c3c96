package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// untrustedKeyTable is what an untrusted project file can do with each
// key: Tightens (applies), Stricter (applies only toward the stricter
// value), Ignored (names a file, command, URL or variable: left out with a
// warning) or Refused (loosens: an error). A key added to the config
// structs fails TestEveryKeyHasATrustRule until it is listed here.
var untrustedKeyTable = map[string]TrustRule{
	"default_model":                     Refused,
	"skills.paths":                      Ignored,
	"skills.excluded_paths":             Tightens,
	"skills.disabled_skills":            Tightens,
	"skills.suppress_warnings":          Tightens,
	"providers.name":                    Ignored,
	"providers.kind":                    Ignored,
	"providers.base_url":                Ignored,
	"providers.request_url":             Ignored,
	"providers.chat_url":                Ignored,
	"providers.effort":                  Ignored,
	"providers.model":                   Ignored,
	"providers.models":                  Ignored,
	"providers.default":                 Ignored,
	"providers.api_key_env":             Ignored,
	"providers.context_window":          Ignored,
	"providers.idle_timeout_seconds":    Ignored,
	"providers.max_output_tokens":       Ignored,
	"providers.max_retries":             Ignored,
	"providers.max_output_bytes":        Ignored,
	"providers.max_stream_bytes":        Ignored,
	"providers.vision":                  Ignored,
	"providers.model_overrides":         Ignored,
	"providers.prices":                  Ignored,
	"agent.system_prompt":               Tightens,
	"agent.system_prompt_file":          Ignored,
	"agent.temperature":                 Tightens,
	"agent.max_steps":                   Stricter,
	"agent.goal_token_budget":           Stricter,
	"agent.goal_max_turns":              Stricter,
	"agent.goal_wall_clock":             Stricter,
	"agent.goal_budget_usd":             Stricter,
	"agent.max_subagent_concurrency":    Stricter,
	"agent.max_parallel_writers":        Stricter,
	"agent.max_subagent_depth":          Stricter,
	"agent.compact_ratio":               Tightens,
	"agent.subagent_model":              Tightens,
	"agent.subagent_models":             Tightens,
	"agent.subagent_effort":             Tightens,
	"agent.subagent_efforts":            Tightens,
	"agent.planner_model":               Tightens,
	"agent.planner_effort":              Tightens,
	"tools.enabled":                     Stricter,
	"tools.bash_timeout_seconds":        Stricter,
	"tools.mcp_startup_timeout_seconds": Stricter,
	"tools.mcp_call_timeout_seconds":    Stricter,
	"tools.protect_changed_files":       Stricter,
	"tools.shell.pass_env":              Ignored,
	"tools.shell.env":                   Ignored,
	"permissions.mode":                  Stricter,
	"permissions.allow":                 Refused,
	"permissions.ask":                   Tightens,
	"permissions.deny":                  Tightens,
	"permissions.allow_dynamic_bash":    Refused,
	"permissions.posture":               Stricter,
	"sandbox.workspace_root":            Ignored,
	"sandbox.allow_write":               Ignored,
	"sandbox.allow_sockets":             Ignored,
	"sandbox.allow_read":                Ignored,
	"sandbox.forbid_read":               Tightens,
	"sandbox.bash":                      Refused,
	"sandbox.network":                   Stricter,
	"plugins.name":                      Ignored,
	"plugins.type":                      Ignored,
	"plugins.command":                   Ignored,
	"plugins.args":                      Ignored,
	"plugins.env":                       Ignored,
	"plugins.url":                       Ignored,
	"plugins.headers":                   Ignored,
	"plugins.startup_timeout_seconds":   Ignored,
	"plugins.call_timeout_seconds":      Ignored,
	"plugins.tool_timeout_seconds":      Ignored,
	"plugins.concurrency":               Ignored,
	"store.driver":                      Refused,
	"store.path":                        Ignored,
	"store.dsn_env":                     Ignored,
	"runner.max_concurrent_tasks":       Refused,
	"runner.task_timeout":               Refused,
	"runner.keep_workspaces":            Refused,
	"runner.approval_ttl":               Refused,
	"runner.stall_after":                Refused,
	"runner.max_tool_calls":             Refused,
	"runner.max_tokens":                 Refused,
	"runner.max_cost_per_task":          Refused,
	"runner.budget_warn":                Refused,
	"runner.keep_worktrees":             Refused,
	"runner.retain":                     Refused,
	"serve.addr":                        Refused,
	"serve.api_token_env":               Ignored,
	"serve.allow_workspace_plugins":     Refused,
	"serve.max_streams_per_token":       Refused,
	"serve.intake_inflight_bytes":       Refused,
	"serve.drain_timeout":               Refused,
	"serve.stale_after":                 Refused,
	"serve.public_url":                  Ignored,
	"bot.slack.enabled":                 Refused,
	"bot.slack.bot_token_env":           Ignored,
	"bot.slack.app_token_env":           Ignored,
	"bot.slack.mode":                    Refused,
	"bot.slack.signing_secret_env":      Ignored,
	"bot.slack.api_url":                 Ignored,
	"bot.slack.allow_users":             Refused,
	"bot.slack.allow_channels":          Refused,
	"bot.slack.approvers":               Refused,
	"bot.slack.slash_command":           Refused,
	"bot.global_approvers":              Refused,
	"bot.approvals_channel":             Refused,
	"bot.approval_remind":               Refused,
	"bot.alerts_channel":                Refused,
	"bot.slack.mention_approvers":       Refused,
	"bot.slack.ack_reaction":            Refused,
	"bot.telegram.enabled":              Refused,
	"bot.telegram.token_env":            Ignored,
	"bot.telegram.mode":                 Refused,
	"bot.telegram.webhook_secret_env":   Ignored,
	"bot.telegram.webhook_path":         Refused,
	"bot.telegram.api_endpoint":         Ignored,
	"bot.telegram.allow_users":          Refused,
	"bot.telegram.allow_chats":          Refused,
	"bot.telegram.approvers":            Refused,
	"bot.routes.transport":              Refused,
	"bot.routes.channel":                Refused,
	"bot.routes.workspace":              Refused,
	"bot.routes.posture":                Refused,
	"bot.routes.goal":                   Refused,
	"bot.routes.plan_first":             Refused,
	"bot.routes.approval_ttl":           Refused,
	"bot.max_posts_per_task":            Refused,
	"workspaces.name":                   Ignored,
	"workspaces.repo":                   Ignored,
	"workspaces.base":                   Ignored,
	"workspaces.setup":                  Ignored,
	"workspaces.plugins_from_workspace": Ignored,
	"workspaces.max_parallel":           Ignored,
	"schedules.name":                    Ignored,
	"schedules.cron":                    Ignored,
	"schedules.timezone":                Ignored,
	"schedules.prompt":                  Ignored,
	"schedules.command":                 Ignored,
	"schedules.args":                    Ignored,
	"schedules.goal":                    Ignored,
	"schedules.budget_usd":              Ignored,
	"schedules.workspace":               Ignored,
	"schedules.posture":                 Ignored,
	"schedules.notify.transport":        Ignored,
	"schedules.notify.channel":          Ignored,
	"schedules.notify.thread":           Ignored,
	"schedules.overlap":                 Ignored,
	"schedules.catch_up":                Ignored,
	"schedules.enabled":                 Ignored,
	"schedules.max_failures":            Ignored,
	"schedules.approval_ttl":            Ignored,
	"webhooks.approval_ttl":             Ignored,
	"webhooks.name":                     Ignored,
	"webhooks.kind":                     Ignored,
	"webhooks.secret_env":               Ignored,
	"webhooks.secrets_env":              Ignored,
	"webhooks.events":                   Ignored,
	"webhooks.filter":                   Ignored,
	"webhooks.prompt":                   Ignored,
	"webhooks.command":                  Ignored,
	"webhooks.args":                     Ignored,
	"webhooks.workspace":                Ignored,
	"webhooks.goal":                     Ignored,
	"webhooks.budget_usd":               Ignored,
	"webhooks.posture":                  Ignored,
	"webhooks.notify.transport":         Ignored,
	"webhooks.notify.channel":           Ignored,
	"webhooks.notify.thread":            Ignored,

	// [workspaces.publish]: a token variable, a push URL, the forge.
	"workspaces.publish.forge":           Ignored,
	"workspaces.publish.api_url":         Ignored,
	"workspaces.publish.project":         Ignored,
	"workspaces.publish.token_env":       Ignored,
	"workspaces.publish.push_url":        Ignored,
	"workspaces.publish.mode":            Ignored,
	"workspaces.publish.base":            Ignored,
	"workspaces.publish.labels":          Ignored,
	"workspaces.publish.wait_ci":         Ignored,
	"workspaces.publish.ci_timeout":      Ignored,
	"workspaces.publish.ci_fix_attempts": Ignored,
	// The two-person rule (issue 26): only the service's own configuration sets it.
	"runner.require_second_approver":     Refused,
	"workspaces.require_second_approver": Ignored,
	"workspaces.allow_reviewers":         Ignored,
}

func TestEveryKeyHasATrustRule(t *testing.T) {
	keys := configKeys(reflect.TypeOf(Config{}), "")
	for _, k := range keys {
		want, ok := untrustedKeyTable[k]
		if !ok {
			t.Errorf("key %q has no row in untrustedKeyTable: decide what an untrusted project file may do with it", k)
			continue
		}
		if got := UntrustedRule(k); got != want {
			t.Errorf("UntrustedRule(%q) = %s, the table says %s", k, got, want)
		}
	}
	for k := range untrustedKeyTable {
		if !slices.Contains(keys, k) {
			t.Errorf("the table lists %q, which is no key", k)
		}
	}
}

// Each Ignored key, set by an untrusted file, is left out with a warning;
// each Refused key is an error naming it.
func TestEveryIgnoredOrRefusedKeyIsEnforced(t *testing.T) {
	for _, k := range configKeys(reflect.TypeOf(Config{}), "") {
		rule := untrustedKeyTable[k]
		if rule != Ignored && rule != Refused {
			continue
		}
		doc, ok := tomlFor(reflect.TypeOf(Config{}), strings.Split(k, "."), "", sampleValue)
		if !ok {
			t.Fatalf("%s: no sample value", k)
		}
		f := newFixture(t)
		f.proj(doc)
		c, err := f.loadUntrusted()
		switch rule {
		case Ignored:
			if err != nil || len(c.Warnings()) != 1 || !strings.Contains(c.Warnings()[0], "ignored") {
				t.Errorf("%s:\n%s\nerr = %v, warnings %v", k, doc, err, c.Warnings())
			}
		case Refused:
			if !errors.Is(err, ErrUntrusted) {
				t.Errorf("%s:\n%s\nerr = %v", k, doc, err)
			}
		}
	}
}

// Each numeric Stricter key (a limit) set far above the value below it is
// refused, and set below it applies.
func TestEveryLimitOnlyGoesDown(t *testing.T) {
	huge := func(t reflect.Type) (string, bool) {
		switch {
		case t == reflect.TypeOf(time.Duration(0)):
			return `"100000h"`, true
		case t.Kind() == reflect.Int || t.Kind() == reflect.Float64:
			return "100000", true
		}
		return "", false
	}
	tried := 0
	for _, k := range configKeys(reflect.TypeOf(Config{}), "") {
		if untrustedKeyTable[k] != Stricter {
			continue
		}
		doc, ok := tomlFor(reflect.TypeOf(Config{}), strings.Split(k, "."), "", huge)
		if !ok {
			continue // posture, mode, network, tools.enabled: TestUntrustedProjectMayOnlyTighten
		}
		tried++
		f := newFixture(t)
		// Every limit below is set, so none is "off".
		f.user("[agent]\nmax_steps = 50\ngoal_token_budget = 50\ngoal_max_turns = 50\ngoal_wall_clock = \"50m\"\n" +
			"goal_budget_usd = 50.0\nmax_subagent_concurrency = 50\nmax_parallel_writers = 50\nmax_subagent_depth = 50\n" +
			"[tools]\nbash_timeout_seconds = 50\nmcp_startup_timeout_seconds = 50\nmcp_call_timeout_seconds = 50\n")
		f.proj(doc)
		if _, err := f.loadUntrusted(); !errors.Is(err, ErrUntrusted) {
			t.Errorf("%s raised: err = %v", k, err)
		}
		low, _ := tomlFor(reflect.TypeOf(Config{}), strings.Split(k, "."), "", func(t reflect.Type) (string, bool) {
			if t == reflect.TypeOf(time.Duration(0)) {
				return `"5m"`, true
			}
			return "5", true
		})
		f.proj(low)
		if _, err := f.loadUntrusted(); err != nil {
			t.Errorf("%s lowered: err = %v", k, err)
		}
	}
	if tried < 10 {
		t.Fatalf("only %d limits tried", tried)
	}
}

// tomlFor writes a document that sets the key path to value(type), with
// the table headers it needs.
func tomlFor(t reflect.Type, path []string, table string, value func(reflect.Type) (string, bool)) (string, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tomlName(f) != path[0] {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		name := strings.TrimPrefix(table+"."+path[0], ".")
		switch {
		case len(path) > 1 && ft.Kind() == reflect.Struct:
			rest, ok := tomlFor(ft, path[1:], name, value)
			return "[" + name + "]\n" + rest, ok
		case len(path) > 1 && ft.Kind() == reflect.Slice:
			rest, ok := tomlFor(ft.Elem(), path[1:], name, value)
			return "[[" + name + "]]\n" + rest, ok
		}
		v, ok := value(ft)
		return path[0] + " = " + v + "\n", ok
	}
	return "", false
}

func sampleValue(t reflect.Type) (string, bool) {
	if t == reflect.TypeOf(time.Duration(0)) || t == reflect.TypeOf(TTL(0)) {
		return `"1h"`, true
	}
	if t == reflect.TypeOf(Retention(0)) {
		return `"2d"`, true
	}
	switch t.Kind() {
	case reflect.String:
		return `"yolo"`, true
	case reflect.Bool:
		return "true", true
	case reflect.Int:
		return "3", true
	case reflect.Float64:
		return "1.5", true
	case reflect.Slice:
		return `["x"]`, true
	case reflect.Map:
		v, ok := sampleValue(t.Elem())
		return fmt.Sprintf("{ x = %s }", v), ok
	case reflect.Struct:
		return "{}", true
	}
	return "", false
}
