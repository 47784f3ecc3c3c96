package bot

import (
	"strings"
)

// Verb is what a chat message asks for.
type Verb string

// The chat commands. VerbTask is plain text: run it as a task.
const (
	VerbTask      Verb = "task"
	VerbGoal      Verb = "goal"
	VerbPlan      Verb = "plan"
	VerbStatus    Verb = "status"
	VerbCancel    Verb = "cancel"
	VerbTasks     Verb = "tasks"
	VerbApprovals Verb = "approvals"
	VerbHelp      Verb = "help"
)

// Command is a parsed chat message.
type Command struct {
	Verb Verb
	// Text is the prompt (task, goal, plan) or the argument (a task id for
	// status and cancel).
	Text string
	// Workspace is the in:<name> choice, "" when absent.
	Workspace string
}

// ParseCommand reads a message addressed to the bot (mention removed).
// The first word may be a command; an in:<workspace> word anywhere before
// the prompt picks the workspace. A leading '/' (Telegram's /goal,
// /goal@bot) is accepted. Text that is no command is a task.
func ParseCommand(text string) Command {
	words := strings.Fields(text)
	c := Command{Verb: VerbTask}
	verbSeen := false
	for len(words) > 0 {
		w := words[0]
		if ws, ok := strings.CutPrefix(w, "in:"); ok && ws != "" && c.Workspace == "" {
			c.Workspace = ws
			words = words[1:]
			continue
		}
		if verbSeen {
			break
		}
		v := strings.ToLower(strings.TrimPrefix(w, "/"))
		if at := strings.IndexByte(v, '@'); at > 0 {
			v = v[:at]
		}
		switch Verb(v) {
		case VerbGoal, VerbPlan, VerbStatus, VerbCancel, VerbTasks, VerbApprovals, VerbHelp:
			c.Verb = Verb(v)
			words = words[1:]
			verbSeen = true
			continue
		case "start": // Telegram's first contact
			c.Verb = VerbHelp
			words = words[1:]
			verbSeen = true
			continue
		}
		break
	}
	c.Text = strings.TrimSpace(strings.Join(words, " "))
	if (c.Verb == VerbGoal || c.Verb == VerbPlan) && c.Text == "" {
		c.Verb = VerbHelp
	}
	if c.Verb == VerbTask && c.Text == "" {
		c.Verb = VerbHelp
	}
	return c
}

// Help is the command summary posted for help, in plain words; the
// caller escapes it.
const Help = `Mention me with what to do, and I run it as a task in this thread.
  goal <objective>  — keep going until the objective is met
  plan <task>       — show a plan first, then work through it
  status [id]       — the task of this thread, or task id
  cancel [id]       — stop it
  tasks             — recent tasks
  approvals         — approvals waiting for a decision
  in:<workspace>    — run in that workspace
  /<command> [args] — run a custom command (.reasonix/commands) of the workspace
  /compact          — in a task's thread: fold its conversation into a summary
Reply in a task's thread to steer it; after it ended, a reply continues it.`
