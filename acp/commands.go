package acp

import (
	"context"
	"fmt"
	"strings"

	"reasonix/agent"
	"reasonix/agent/recipe"
)

// availableCommands is the available_commands_update of a session: its
// workspace's custom commands (/name), as `reasonix run` knows them.
func (l *live) availableCommands() map[string]any {
	cmds := []map[string]any{}
	for _, c := range l.commands.List() {
		cmd := map[string]any{"name": c.Name, "description": c.Description}
		if c.ArgumentHint != "" {
			cmd["input"] = map[string]string{"hint": c.ArgumentHint}
		}
		cmds = append(cmds, cmd)
	}
	return map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": cmds}
}

// expandCommand renders a prompt whose first word names a custom command
// (/name) or an MCP prompt of the session's plugins, as `reasonix run`
// does; other prompts are returned as they are. An unknown command is an
// error naming the nearest ones, and nothing reaches the model.
func (l *live) expandCommand(ctx context.Context, text string) (string, error) {
	name, rest, ok := recipe.CommandWord(text)
	if _, builtin := agent.ParseCompactCommand(text); !ok || builtin {
		return text, nil // /compact is the agent's own action, winning over a command of that name
	}
	if c, found := l.commands.Lookup(name); found {
		return c.Render(recipe.SplitArgs(rest)), nil
	}
	known := l.commands.Names()
	if strings.HasPrefix(name, "mcp__") {
		l.mu.Lock()
		sess := l.sess
		l.mu.Unlock()
		out, found, err := sess.MCPPrompt(ctx, name, recipe.SplitArgs(rest))
		if err != nil {
			return "", err
		}
		if found {
			return out, nil
		}
		known = append(known, sess.MCPPromptNames(ctx)...)
	}
	msg := fmt.Sprintf("unknown command /%s", name)
	if near := recipe.Nearest(name, known); len(near) > 0 {
		msg += "; did you mean /" + strings.Join(near, ", /") + "?"
	}
	return "", fmt.Errorf("%s", msg)
}
