package relay

import (
	"context"
	"strings"

	"reasonix/agent"
	"reasonix/agent/recipe"

	"reasonix/bot"
	"reasonix/runner"
)

// asCommand makes req run a custom command when the prompt names one; the
// runner renders it from the workspace's base commit and refuses an
// unknown name with the nearest ones.
func asCommand(req *runner.TaskRequest) {
	if _, builtin := agent.ParseCompactCommand(req.Prompt); builtin {
		return // the agent's own action (nothing to fold in a new task, and it says so)
	}
	if name, args, ok := bot.CommandOf(req.Prompt); ok {
		req.Command, req.Args, req.Prompt = name, []string{args}, ""
	}
}

// steerCommand handles a /command reply in a task's thread: the command's
// text, rendered, is the reply. ok is false when text names no command;
// done is false when a redelivery may succeed where this failed.
func (r *Relay) steerCommand(ctx context.Context, t bot.Transport, in bot.Inbound, text, taskID string) (ok, done bool) {
	name, args, isCmd := bot.CommandOf(text)
	if _, builtin := agent.ParseCompactCommand(text); !isCmd || builtin {
		return false, true // /compact is a plain reply: the agent's own action
	}
	task, err := r.svc.Task(ctx, taskID)
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "reading the task"))
		return true, !transient(err)
	}
	// The plugins are asked only for a name of the MCP form.
	cs, err := r.svc.Commands(ctx, task.Workspace, strings.HasPrefix(name, "mcp__"))
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "reading the workspace's commands"))
		return true, !transient(err)
	}
	c, found := cs.Lookup(name)
	if !found {
		r.reply(ctx, t, in.Channel, in.Home(), runner.UnknownCommand(name, cs.Names()))
		return true, true
	}
	text, err = r.svc.RenderCommand(ctx, c, recipe.SplitArgs(args))
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "rendering the command"))
		return true, !transient(err)
	}
	in.Text = text
	return true, r.steer(ctx, t, in, taskID)
}

// help is the chat help with the commands of the workspace the message
// would run in, MCP prompts included.
func (r *Relay) help(ctx context.Context, in bot.Inbound, cmd bot.Command) string {
	ws := cmd.Workspace
	if route := r.cfg.Bot.Route(in.Transport, in.Channel); route != nil {
		ws = cmpStr(ws, route.Workspace)
	}
	cs, err := r.svc.Commands(ctx, ws, true)
	if err != nil {
		r.log.Warn("relay: listing commands for help", "workspace", ws, "err", err)
		return bot.Help
	}
	return bot.Help + bot.CommandsHelp(cs)
}
