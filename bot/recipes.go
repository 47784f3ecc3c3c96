package bot

import (
	"strings"

	"reasonix/agent/recipe"
)

// CommandOf reports whether a task's text names a custom command: its
// first word is /name (letters, digits, '-', '_', ':', no second slash;
// Telegram's /name@bot suffix is dropped). Anything else, such as
// "/tmp/x is broken", is a prompt as typed.
func CommandOf(text string) (name, args string, ok bool) {
	text = strings.TrimSpace(text)
	end := strings.IndexAny(text, " \t\r\n")
	if end < 0 {
		end = len(text)
	}
	if at := strings.IndexByte(text[:end], '@'); at > 1 && strings.HasPrefix(text, "/") {
		text = text[:at] + text[end:]
	}
	return recipe.CommandWord(text)
}

// maxHelpCommands bounds the commands the chat help lists.
const maxHelpCommands = 50

// CommandsHelp lists a workspace's commands for the chat help, one line
// each: "/name hint — description".
func CommandsHelp(cs *recipe.Commands) string {
	list := cs.List()
	if len(list) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nCommands of this workspace:")
	for i, c := range list {
		if i == maxHelpCommands {
			b.WriteString("\n  …")
			break
		}
		b.WriteString("\n  /" + c.Name)
		if c.ArgumentHint != "" {
			b.WriteString(" " + c.ArgumentHint)
		}
		if c.Description != "" {
			b.WriteString(" — " + c.Description)
		}
	}
	return b.String()
}
