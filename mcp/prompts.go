package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxPromptText bounds a rendered prompt: it becomes a task's prompt.
const maxPromptText = 100 << 10

// Prompt is one prompt a server offers, named /mcp__<server>__<prompt> in
// commands. Arguments are its declared argument names, in order;
// ArgumentHint shows them as a command's hint ("<required> [optional]").
type Prompt struct {
	Server       string
	Name         string
	Description  string
	Arguments    []string
	ArgumentHint string
}

// Command is the prompt's command name, without the slash.
func (p Prompt) Command() string { return "mcp__" + p.Server + "__" + p.Name }

// Prompts lists the prompts of every server that is (or becomes, within
// ctx) ready and advertises prompts; a server that fails or offers none is
// left out. Sorted by command name.
func (m *Manager) Prompts(ctx context.Context) []Prompt {
	var out []Prompt
	for _, s := range m.servers {
		c, err := s.ready(ctx)
		if err != nil || !offersPrompts(c) {
			continue
		}
		for p, err := range c.session.Prompts(ctx, nil) {
			if err != nil {
				break
			}
			pr := Prompt{Server: s.cfg.Name, Name: p.Name, Description: p.Description}
			var hint []string
			for _, a := range p.Arguments {
				pr.Arguments = append(pr.Arguments, a.Name)
				if a.Required {
					hint = append(hint, "<"+a.Name+">")
				} else {
					hint = append(hint, "["+a.Name+"]")
				}
			}
			pr.ArgumentHint = strings.Join(hint, " ")
			out = append(out, pr)
		}
	}
	slices.SortFunc(out, func(a, b Prompt) int { return strings.Compare(a.Command(), b.Command()) })
	return out
}

// GetPrompt renders the prompt a command name (mcp__<server>__<prompt>)
// names: args fill its declared arguments in order, the last one taking
// the rest. The text of its messages, joined by blank lines, is the
// result; other content (images, resources) is noted, not inlined.
// found is false when no ready server offers that prompt.
func (m *Manager) GetPrompt(ctx context.Context, command string, args []string) (text string, found bool, err error) {
	for _, p := range m.Prompts(ctx) {
		if p.Command() != command {
			continue
		}
		s := m.byName(p.Server)
		c, err := s.ready(ctx)
		if err != nil {
			return "", true, err
		}
		res, err := c.session.GetPrompt(ctx, &sdk.GetPromptParams{Name: p.Name, Arguments: promptArgs(p.Arguments, args)})
		if err != nil {
			return "", true, fmt.Errorf("mcp: server %q: prompt %q: %w", p.Server, p.Name, err)
		}
		var parts []string
		for _, msg := range res.Messages {
			if t, ok := msg.Content.(*sdk.TextContent); ok {
				parts = append(parts, t.Text)
			} else {
				parts = append(parts, "[non-text prompt content left out]")
			}
		}
		text = strings.Join(parts, "\n\n")
		if len(text) > maxPromptText {
			return "", true, fmt.Errorf("mcp: server %q: prompt %q is longer than %d bytes", p.Server, p.Name, maxPromptText)
		}
		return text, true, nil
	}
	return "", false, nil
}

func (m *Manager) byName(name string) *server {
	for _, s := range m.servers {
		if s.cfg.Name == name {
			return s
		}
	}
	return nil
}

func offersPrompts(c *conn) bool {
	ir := c.session.InitializeResult()
	return ir != nil && ir.Capabilities != nil && ir.Capabilities.Prompts != nil
}

// promptArgs maps positional args onto the declared names; the last name
// takes every remaining word.
func promptArgs(names, args []string) map[string]string {
	out := map[string]string{}
	for i, n := range names {
		switch {
		case i >= len(args):
			return out
		case i == len(names)-1:
			out[n] = strings.Join(args[i:], " ")
		default:
			out[n] = args[i]
		}
	}
	return out
}
