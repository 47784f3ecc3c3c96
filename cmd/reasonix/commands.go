package main

import (
	"flag"
	"fmt"
	"io"
)

// commands is the command tree: every command, its synopsis, flags, example
// and implementation. Help, completion and dispatch are all derived from it.
// It is built by a function because "help" and "completion" read the tree.
func commands() *command {
	root := &command{
		name:  "reasonix",
		about: "Reasonix runs coding agents headless.",
		example: `reasonix init
reasonix run --auto "fix the failing test"
reasonix serve`,
	}
	root.subs = []*command{
		{
			name: "serve", summary: "run the service: HTTP API, durable task queue, workers",
			about:   "Runs the service until SIGINT or SIGTERM: the HTTP API, the durable task queue and its workers.\nIt checks every [[workspaces]] entry at start and refuses to start when one is unusable.",
			example: "reasonix serve --addr 127.0.0.1:9090",
			flags:   serveFlags,
		},
		{
			name: "run", args: "TASK...", summary: "run one task in a workspace and exit",
			about: `Runs one task headless in a workspace and exits: 0 succeeded, 1 failed, 2 usage or config
error, 3 blocked (a needed call was refused, or the goal is blocked), 4 step limit or budget
reached, 130 interrupted. Flags may come before or after the task; "--" ends them.`,
			example: `reasonix run "explain what cmd/reasonix does"
reasonix run --auto --workspace ~/src/app "make the tests pass"
reasonix run --goal --posture auto --json "migrate the config loader to TOML"`,
			flags: runFlags,
		},
		{
			name: "acp", summary: "serve an editor over the Agent Client Protocol on stdin/stdout",
			about: `Speaks the Agent Client Protocol (ACP v1, NDJSON JSON-RPC) on standard input and output for
editors that launch coding agents (Zed, JetBrains, Neovim). Each editor session is assembled like
a run: the same policy, sandbox, tools and plugins; calls that need a person are asked in the
editor. With --server URL the sessions are the service's tasks instead: listed, followed live,
steered, submitted and their approvals decided as the API token's principal. Standard output
carries only protocol messages; diagnostics go to standard error.`,
			example: `reasonix acp
reasonix acp --model deepseek-pro --profile delivery
reasonix acp --server https://reasonix.example.com`,
			flags: acpFlags,
		},
		{
			name: "commands", summary: "list the custom commands (/name) of a workspace",
			example: "reasonix commands list --workspace app",
			subs:    commandsCommands(),
		},
		{
			name: "skills", summary: "list the skills of a workspace: source, invocation, run as",
			example: "reasonix skills list --workspace app",
			subs:    skillsCommands(),
		},
		{
			name: "subagent", summary: "run a sub-agent profile on a task: try (read-only) or run",
			example: "reasonix subagent try reviewer \"review run.go\"",
			subs:    subagentCommands(),
		},
		{
			name: "tasks", summary: "hand the service tasks, follow, steer, cancel and resume them",
			about: "Talks to a running `reasonix serve` over its API (--server, default http://[serve] addr).\nThe token comes from $REASONIX_API_TOKEN, the variable [serve] api_token_env names, or <data dir>/api-token.",
			example: `reasonix tasks submit --workspace app --wait "fix the flaky test"
reasonix tasks list --state running,waiting_approval`,
			subs: tasksCommands(),
		},
		{
			name: "approvals", summary: "see and decide the calls tasks wait on",
			about:   "Lists, shows and decides the approvals tasks wait on, through a running service's API.\nApproval ids look like a_….",
			example: "reasonix approvals list\nreasonix approvals show a_01hx…\nreasonix approvals allow a_01hx…",
			subs:    approvalsCommands(),
		},
		{
			name: "grants", summary: "list and revoke the standing grants (Allow always)",
			about:   "Lists and revokes the standing grants approvers made with Allow always, through a running service's API.\nListing needs any token; revoking a grant or admin token. Grant ids look like sg_….",
			example: "reasonix grants list\nreasonix grants revoke sg_01hx…",
			subs:    grantsCommands(),
		},
		{
			name: "memory", summary: "list, show and forget what agents remembered between tasks",
			about:   "Lists, shows and forgets the facts task agents saved with the remember tool, through a running service's API.\nA token sees its own user memories and every workspace's; forgetting a workspace's memory takes who saved it, an approve or an admin token. Memory ids look like mem_….",
			example: "reasonix memory list\nreasonix memory show mem_01hx…\nreasonix memory forget mem_01hx…",
			subs:    memoryCommands(),
		},
		{
			name: "roles", summary: "grant Slack and Telegram identities a role (approve from chat)",
			about:   "Administers the roles of chat identities in the configured store directly (no running service needed).\nA chat identity is a principal like a token: slack:<team>/<user> or telegram:<user id>.",
			example: "reasonix roles grant slack:T0123/U0456 --role approve\nreasonix roles list",
			subs:    rolesCommands(),
		},
		{
			name: "schedules", summary: "list the [[schedules]], run one now, pause and resume them",
			about:   "Talks to a running `reasonix serve` over its API. Listing needs any token; run, pause and resume an admin token.",
			example: "reasonix schedules list\nreasonix schedules pause nightly-deps",
			subs:    schedulesCommands(),
		},
		{
			name: "tokens", summary: "create, list and revoke the API's tokens and their roles",
			about: "Administers the API's tokens in the configured store directly (no running service needed). Each token is\n" +
				"a principal, token:NAME, with a role (submit, approve, admin) and a highest posture for its tasks.\n" +
				"The service's own token (<data dir>/api-token or [serve] api_token_env) is the admin token \"admin\".",
			example: "reasonix tokens create ci --role submit\nreasonix tokens list\nreasonix tokens revoke ci",
			subs:    tokensCommands(),
		},
		{
			name: "login-link", summary: "print a one-time link that signs a browser into the dashboard",
			about: "Writes a single-use sign-in code for a token's principal to the configured store (no running service\n" +
				"needed) and prints the dashboard link that uses it. The link works once, within --ttl; the session it\n" +
				"starts has the token's role and ends when the token is revoked.",
			example: "reasonix login-link\nreasonix login-link --token erin --url https://reasonix.example.com",
			flags:   loginLinkFlags,
		},
		{
			name: "dashboard", summary: "print (and with --open, open) a one-time sign-in link to the dashboard",
			about: "The same link as `reasonix login-link` (same flags), printed on stdout; --open also hands it to the\n" +
				"desktop's browser (xdg-open, or open on macOS). Without one, the link is still printed to open by hand.",
			example: "reasonix dashboard --open\nreasonix dashboard --token erin",
			flags:   dashboardFlags,
		},
		{
			name: "webhooks", summary: "list the configured webhooks and what they received",
			about:   "Shows each [[webhooks]] entry and its recent deliveries from the configured store (no running service needed).\nDeliveries arrive at POST /hooks/NAME, authenticated by their signature.",
			example: "reasonix webhooks list",
			subs:    webhooksCommands(),
		},
		{
			name: "gc", summary: "remove finished tasks' old worktrees, branches, scratch dirs and history",
			about: "Asks a running `reasonix serve` (admin token) to collect garbage now, as it does every hour on its own:\n" +
				"the answering node's finished tasks' worktrees, local branches and scratch directories older than\n" +
				"[runner] keep_worktrees, and the store's events, messages and tool journal older than [runner] retain.\n" +
				"Uncommitted work and unpublished commits are never removed; --dry-run lists what would go and why\n" +
				"the rest stays.",
			example: "reasonix gc --dry-run\nreasonix gc",
			flags:   gcFlags,
		},
		{
			name: "nodes", summary: "list the serve nodes sharing the store, their heartbeats and running tasks",
			about:   "Reads the configured store directly (no running service needed): every `reasonix serve` node that used it,\nits state (running, draining, stopped; stale when its heartbeat is older than [serve] stale_after), which one\nRiver elected leader (it runs the sweeps and schedules), its version, and the tasks it runs.",
			example: "reasonix nodes\nreasonix nodes --json",
			flags:   nodesFlags,
		},
		{
			name: "config", summary: "check the configuration",
			example: "reasonix config check",
			subs: []*command{{
				name: "check", summary: "load and validate the configuration, and check every workspace",
				about:   "Loads the configuration as `run` does, validates it, resolves the default model, checks its key\nvariable is set and that every [[workspaces]] repo is reachable with its base branch. Exits 0 or 2.",
				example: "reasonix config check --config ./reasonix.toml",
				flags:   configFileAction(configCheck),
			}, {
				name: "compact-ratio", args: "[VALUE]", summary: "show or set [agent] compact_ratio, when the context is compacted",
				about:   "Without VALUE, prints the effective compact_ratio and where it comes from. With VALUE (strictly\nbetween 0 and 1, e.g. 0.8) writes it to [agent] in the user config, keeping the rest of the file.\nA conversation is compacted when its prompt reaches context_window × compact_ratio.",
				example: "reasonix config compact-ratio 0.8",
				flags:   configCompactRatioFlags,
			}},
		},
		{
			name: "slack", summary: "set up the Slack app",
			example: "reasonix slack manifest > slack-manifest.json",
			subs: []*command{{
				name: "manifest", summary: "print the Slack app manifest the relay needs",
				about: "Prints a Slack app manifest (JSON) with exactly the bot scopes, events, interactivity, slash command\n" +
					"and Socket Mode setting the relay needs: create the app at https://api.slack.com/apps from it.\n" +
					"With [bot.slack] mode = \"http\" it has the request URLs under [serve] public_url instead of Socket Mode.",
				example: "reasonix slack manifest --name \"Reasonix\"",
				flags:   slackManifestFlags,
			}},
		},
		{
			name: "mcp", summary: "inspect the configured MCP servers",
			example: "reasonix mcp list",
			subs: []*command{{
				name: "list", summary: "start the configured MCP servers and list their tools",
				about:   "Starts every configured MCP server ([[plugins]] and ./.mcp.json), waits for it, prints its\nstate and tool count, and stops it again. --json prints the same as a list of objects.",
				example: "reasonix mcp list --json",
				flags:   mcpListFlags,
			}},
		},
		{
			name: "migrate", summary: "bring the database schema up to date",
			about:   "Opens the configured store and migrates its schema; safe to run repeatedly and from several nodes.",
			example: "reasonix migrate",
			flags:   configFileAction(migrate),
		},
		{
			name: "doctor", summary: "check configuration, model endpoint, store, workspaces, git and sandbox",
			about:   "Checks everything a run or the service needs, one line each (ok, warn or FAIL). Exits 1 when a check failed.",
			example: "reasonix doctor",
			flags:   configFileAction(doctor),
		},
		{
			name: "health", summary: "probe a running service's /healthz (or /readyz); exit 0 when it answers 200",
			about:   "GETs /healthz of the service at --server, default http://[serve] addr ($REASONIX_ADDR applied, an\nall-interfaces address probed on loopback); --ready probes /readyz. Exits 0 on 200, else 1. No token needed.\nContainer images use it as their HEALTHCHECK.",
			example: "reasonix health\nreasonix health --ready --server http://10.0.0.5:8080",
			flags:   healthFlags,
		},
		{
			name: "init", summary: "write a starter ./reasonix.toml",
			about:   "Writes ./reasonix.toml with a model provider and, inside a git repository, a workspace for it,\nand says which environment variable to export. It never overwrites a file unless --force is given.",
			example: "reasonix init\nreasonix init --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder --key-env \"\"",
			flags:   initFlags,
		},
		{
			name: "trust", args: "[DIR]", summary: "let run obey a directory's own reasonix.toml and .mcp.json",
			about: `Records DIR (default: the current directory) as trusted in <home>/trusted.toml. Until then
` + "`run`" + ` (and config check, mcp list) obey a directory's own reasonix.toml and .mcp.json only where
they tighten the configuration (deny and ask rules, a lower posture, ...); a key that would loosen it
or start a process is refused with exit 2. Trust only what you have read.`,
			example: "reasonix trust\nreasonix trust ~/src/app",
			flags:   trustFlags,
		},
		{
			name: "completion", args: "SHELL", summary: "print a shell completion script (bash, zsh or fish)",
			about: "Prints a completion script for SHELL (bash, zsh or fish) on stdout.",
			example: `source <(reasonix completion bash)
reasonix completion zsh > "${fpath[1]}/_reasonix"
reasonix completion fish > ~/.config/fish/completions/reasonix.fish`,
			flags: func(*flag.FlagSet) action {
				return func(args []string, stdout, _ io.Writer) error { return completionCommand(root, args[0], stdout) }
			},
		},
		{
			name: "version", summary: "print the version",
			example: "reasonix version",
			flags: func(*flag.FlagSet) action {
				return func(_ []string, stdout, _ io.Writer) error {
					fmt.Fprintf(stdout, "reasonix %s\n", version)
					return nil
				}
			},
		},
		{
			name: "help", args: "[COMMAND] [SUBCOMMAND]", summary: "show help for a command",
			example: "reasonix help tasks submit",
			flags: func(*flag.FlagSet) action {
				return func(args []string, stdout, _ io.Writer) error { return helpCommand(root, args, stdout) }
			},
		},
	}
	return root
}

// configFileAction is the flag builder of a command whose only flag is
// --config and which takes no arguments.
func configFileAction(run func(file string, stdout, stderr io.Writer) error) func(*flag.FlagSet) action {
	return func(fs *flag.FlagSet) action {
		file := configFileFlag(fs)
		return func(_ []string, stdout, stderr io.Writer) error { return run(*file, stdout, stderr) }
	}
}

func configFileFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "", "configuration `file` (replaces ./reasonix.toml)")
}
