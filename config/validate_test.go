package config

import (
	"strings"
	"testing"
)

// Each case is a project file with exactly one problem; the error must name
// the field and the file, and must be the only problem reported.
func TestValidateRules(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"provider name required", "[[providers]]\nmodel = \"m\"", `providers[0].name: is required`},
		{"provider name alphabet", "[[providers]]\nname = \"a/b\"\nmodel = \"m\"", `providers[0].name: "a/b" must start`},
		{"provider without model", "[[providers]]\nname = \"p\"", `providers[p]: declare model`},
		{"model and models", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nmodels = [\"n\"]", `providers[p]: set either model or models`},
		{"default with model", "[[providers]]\nname = \"p\"\nmodel = \"m\"\ndefault = \"m\"", `providers[p].default: only applies with models`},
		{"default not in models", "[[providers]]\nname = \"p\"\nmodels = [\"m\"]\ndefault = \"x\"", `providers[p].default: "x" is not in models`},
		{"duplicate model", "[[providers]]\nname = \"p\"\nmodels = [\"m\", \"m\"]", `providers[p].models[1]: "m" is listed twice`},
		{"empty model", "[[providers]]\nname = \"p\"\nmodels = [\"\"]", `providers[p].models[0]: must not be empty`},
		{"base_url scheme", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nbase_url = \"ftp://x\"", `providers[p].base_url: must be an absolute http`},
		{"request_url relative", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nrequest_url = \"/v1\"", `providers[p].request_url: must be an absolute http`},
		{"api_key_env holds a key", "[[providers]]\nname = \"p\"\nmodel = \"m\"\napi_key_env = \"sk-abc\"", `providers[p].api_key_env: must be the NAME`},
		{"negative context", "[[providers]]\nname = \"p\"\nmodel = \"m\"\ncontext_window = -1", `providers[p].context_window: must not be negative`},
		{"negative idle", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nidle_timeout_seconds = -5", `providers[p].idle_timeout_seconds: must not be negative`},
		{"negative max output", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nmax_output_tokens = -5", `providers[p].max_output_tokens: must not be negative`},
		{"negative output bytes", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nmax_output_bytes = -1", `providers[p].max_output_bytes: must not be negative`},
		{"stream below output", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nmax_output_bytes = 2000\nmax_stream_bytes = 1000", `providers[p].max_stream_bytes: must be at least max_output_bytes (2000), got 1000`},
		{"max retries", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nmax_retries = -1", `providers[p].max_retries: must be between 0 and 100`},
		{"override unknown model", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nmodel_overrides = { x = { context_window = 5 } }", `providers[p].model_overrides."x": "x" is not a model`},
		{"override negative", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nmodel_overrides = { m = { max_output_tokens = -5 } }", `providers[p].model_overrides."m".max_output_tokens: must not be negative`},
		{"price unknown model", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nprices = { x = { input = 1.0 } }", `providers[p].prices."x": "x" is not a model`},
		{"price negative", "[[providers]]\nname = \"p\"\nmodel = \"m\"\nprices = { m = { output = -1.0 } }", `providers[p].prices."m".output: must be a non-negative`},
		{"default_model unknown", "default_model = \"nope\"\n" + minimalProvider, `default_model: unknown model "nope" (known: p, p/m)`},
		{"default_model without providers", "default_model = \"nope\"", `default_model: no providers are configured`},
		{"temperature", "[agent]\ntemperature = 2.5", `agent.temperature: must be between 0 and 2 (got 2.5)`},
		{"max_steps", "[agent]\nmax_steps = 0", `agent.max_steps: must be between 1 and 100000 (got 0)`},
		{"goal budget", "[agent]\ngoal_token_budget = -1", `agent.goal_token_budget: must not be negative`},
		{"goal turns", "[agent]\ngoal_max_turns = -1", `agent.goal_max_turns: must not be negative`},
		{"goal wall clock", "[agent]\ngoal_wall_clock = \"-1m\"", `agent.goal_wall_clock: must not be negative`},
		{"subagents", "[agent]\nmax_subagent_concurrency = 0", `agent.max_subagent_concurrency: must be between 1 and 64`},
		{"writers", "[agent]\nmax_parallel_writers = 100", `agent.max_parallel_writers: must be between 1 and 64`},
		{"tools enabled empty", "[tools]\nenabled = [\"bash\", \" \"]", `tools.enabled: entry 1 is empty`},
		{"tools enabled twice", "[tools]\nenabled = [\"bash\", \"bash\"]", `tools.enabled: "bash" is listed twice`},
		{"bash timeout", "[tools]\nbash_timeout_seconds = -1", `tools.bash_timeout_seconds: must be between 0 and 86400`},
		{"mcp startup", "[tools]\nmcp_startup_timeout_seconds = 0", `tools.mcp_startup_timeout_seconds: must be between 1 and 3600`},
		{"mcp call", "[tools]\nmcp_call_timeout_seconds = 0", `tools.mcp_call_timeout_seconds: must be between 1 and 86400`},
		{"mode", "[permissions]\nmode = \"maybe\"", `permissions.mode: "maybe" is not one of ask, allow, deny`},
		{"posture", "[permissions]\nposture = \"reckless\"", `line 2, column 12: key "permissions.posture": posture "reckless" is not one of ask, auto, yolo`},
		{"empty rule", "[permissions]\ndeny = [\"\"]", `permissions.deny: entry 0 is empty`},
		{"sandbox bash", "[sandbox]\nbash = \"on\"", `sandbox.bash: "on" is not one of auto, require, enforce, off`},
		{"relative forbid_read", "[sandbox]\nforbid_read = [\".ssh\"]", `sandbox.forbid_read[0]: ".ssh" must be absolute`},
		{"relative allow_write", "[sandbox]\nallow_write = [\"tmp\"]", `sandbox.allow_write[0]: "tmp" must be absolute`},
		{"relative allow_sockets", "[sandbox]\nallow_sockets = [\"/run/a.sock\", \"agent.sock\"]", `sandbox.allow_sockets[1]: "agent.sock" must be absolute`},
		{"plugin name", "[[plugins]]\ncommand = \"x\"", `plugins[0].name: is required`},
		{"plugin command", "[[plugins]]\nname = \"x\"", `plugins[x].command: is required for a stdio server`},
		{"plugin type", "[[plugins]]\nname = \"x\"\ntype = \"grpc\"", `plugins[x].type: "grpc" is not one of stdio, http, sse`},
		{"plugin url required", "[[plugins]]\nname = \"x\"\ntype = \"http\"", `plugins[x].url: is required for type "http"`},
		{"plugin url scheme", "[[plugins]]\nname = \"x\"\ntype = \"sse\"\nurl = \"file:///etc/passwd\"", `plugins[x].url: must be an absolute http`},
		{"stdio with url", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\nurl = \"https://a\"", `plugins[x]: url and headers apply only`},
		{"http with command", "[[plugins]]\nname = \"x\"\ntype = \"http\"\nurl = \"https://a\"\ncommand = \"c\"", `plugins[x]: command, args and env apply only`},
		{"plugin env name", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\nenv = { \"A-B\" = \"1\" }", `plugins[x].env: "A-B" is not a valid environment variable name`},
		{"plugin header name", "[[plugins]]\nname = \"x\"\ntype = \"http\"\nurl = \"https://a\"\nheaders = { \"Bad Header\" = \"1\" }", `plugins[x].headers: "Bad Header" is not a valid HTTP header name`},
		{"plugin startup", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\nstartup_timeout_seconds = -1", `plugins[x].startup_timeout_seconds: must be between 0 and 3600`},
		{"plugin call", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\ncall_timeout_seconds = -1", `plugins[x].call_timeout_seconds: must be between 0 and 86400`},
		{"plugin tool timeout", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\ntool_timeout_seconds = { gen = 0 }", `plugins[x].tool_timeout_seconds."gen": must be between 1 and 86400`},
		{"plugin concurrency", "[[plugins]]\nname = \"x\"\ncommand = \"c\"\nconcurrency = \"fast\"", `plugins[x].concurrency: "fast" is not one of parallel, serial`},
		{"store driver", "[store]\ndriver = \"mysql\"", `store.driver: "mysql" is not one of sqlite, postgres`},
		{"postgres dsn", "[store]\ndriver = \"postgres\"", `store.dsn_env: is required with driver = "postgres"`},
		{"dsn env name", "[store]\ndsn_env = \"postgres://u:p@h/db\"", `store.dsn_env: must be the NAME`},
		{"runner tasks", "[runner]\nmax_concurrent_tasks = 0", `runner.max_concurrent_tasks: must be between 1 and 1024`},
		{"task timeout", "[runner]\ntask_timeout = \"0s\"", `runner.task_timeout: must be positive`},
		{"approval ttl max", "[runner]\napproval_ttl = \"25h\"", `runner.approval_ttl: must be positive and at most 24h, or "none" (got 25h0m0s)`},
		{"max tool calls", "[runner]\nmax_tool_calls = -1", `runner.max_tool_calls: must not be negative`},
		{"max tokens", "[runner]\nmax_tokens = -1", `runner.max_tokens: must not be negative`},
		{"max cost", "[runner]\nmax_cost_per_task = -0.5", `runner.max_cost_per_task: must be a non-negative amount of USD`},
		{"goal cost budget", "[agent]\ngoal_budget_usd = -1", `agent.goal_budget_usd: must be a non-negative amount of USD`},
		{"budget warn share", "[runner]\nbudget_warn = 1.5", `runner.budget_warn: must be a share from 0 to 1`},
		{"serve addr", "[serve]\naddr = \"8080\"", `serve.addr: "8080" is not host:port`},
		{"serve port", "[serve]\naddr = \":http-alt\"", `serve.addr: ":http-alt" has an invalid port`},
		{"serve streams", "[serve]\nmax_streams_per_token = 0", `serve.max_streams_per_token: must be between 1 and 100000`},
		{"serve intake budget", "[serve]\nintake_inflight_bytes = 65536", `serve.intake_inflight_bytes: must be between 1048576 and 1073741824 (got 65536)`},
		{"serve token env", "[serve]\napi_token_env = \"abc def\"", `serve.api_token_env: must be the NAME`},
		{"workspace name", "[[workspaces]]\nrepo = \"r\"", `workspaces[0].name: is required`},
		{"workspace repo", "[[workspaces]]\nname = \"w\"", `workspaces[w].repo: is required`},
		{"workspace setup", "[[workspaces]]\nname = \"w\"\nrepo = \"/r\"\nsetup = [\"\"]", `workspaces[w].setup: entry 0 is empty`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.proj(tc.file + "\n")
			got := f.loadErr()
			wantContains(t, got, "config: "+p+": "+tc.want)
			if n := strings.Count(got, "\n") + 1; n != 1 {
				t.Errorf("want exactly one problem, got %d:\n%s", n, got)
			}
		})
	}
}

func TestValidateReportsEveryProblemAndItsFile(t *testing.T) {
	f := newFixture(t)
	user := f.user("[agent]\ntemperature = 9.0\n[[providers]]\nname = \"u\"\n")
	proj := f.proj("[runner]\nmax_tokens = -3\n[permissions]\nmode = \"x\"\n")
	got := f.loadErr()
	wantContains(t, got,
		"config: "+user+": agent.temperature:",
		"config: "+user+": providers[u]: declare model",
		"config: "+proj+": runner.max_tokens:",
		"config: "+proj+": permissions.mode:")
}

func TestValidateDuplicateAcrossSources(t *testing.T) {
	c := Default()
	c.Providers = []Provider{{Name: "p", Model: "m", Source: "a.toml"}, {Name: "p", Model: "n", Source: "--provider flag"}}
	err := c.Validate()
	if err == nil {
		t.Fatal("duplicate provider accepted")
	}
	wantContains(t, err.Error(), `config: --provider flag: providers[p].name: "p" is declared twice (first in a.toml)`)
}
