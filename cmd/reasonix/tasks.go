package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"reasonix/agent"
	"reasonix/runner/apitype"
	"reasonix/runner/client"
	"reasonix/runner/store"
)

// tasksCommands are `reasonix tasks list|show|submit|watch|message|cancel|resume`.
func tasksCommands() []*command {
	return []*command{
		{
			name: "list", summary: "list tasks, newest first",
			example: "reasonix tasks list --state running,waiting_approval\nreasonix tasks list --source slack --json",
			flags: func(fs *flag.FlagSet) action {
				state := fs.String("state", "", "only tasks in these `states` (comma-separated)")
				source := fs.String("source", "", "only tasks from this `source` (cli, api, slack, …)")
				asJSON := fs.Bool("json", false, "print the service's JSON")
				return clientAction(fs, func(c *client.Client, _ []string, stdout, _ io.Writer) error {
					return tasksList(c, *state, *source, *asJSON, stdout)
				})
			},
		},
		{
			name: "show", args: "ID", summary: "show a task and its result",
			example: "reasonix tasks show t_01hx…",
			flags: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print the service's JSON")
				return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
					id, err := resolveID(c, "task", args[0], (*client.Client).ResolveTask)
					if err != nil {
						return err
					}
					t, err := c.Task(context.Background(), id)
					if err != nil {
						return notFound(err, "task", args[0])
					}
					if *asJSON {
						return json.NewEncoder(stdout).Encode(t)
					}
					printTask(stdout, t, taskInstructions(c, t))
					return nil
				})
			},
		},
		{
			name: "submit", args: "PROMPT...", summary: "hand the service a task and print its id",
			about: "Submits a task (source cli; the requester is the token's principal) and prints its id. With --wait it follows the task\nlike `tasks watch` and exits as `reasonix run` would.",
			example: `reasonix tasks submit --workspace app --wait "fix the flaky test in store"
reasonix tasks submit --goal --posture auto "upgrade the dependencies"`,
			flags: func(fs *flag.FlagSet) action {
				ws := fs.String("workspace", "", "the [[workspaces]] entry to work in, by `name` (default: a scratch directory)")
				var posture string
				fs.Var(postureValue{&posture}, "posture", "`ask|auto|yolo`: the tool-approval posture (default [permissions] posture)")
				goal := fs.Bool("goal", false, "run the task as a goal")
				planFirst := fs.Bool("plan-first", false, "plan read-only first and wait for the plan's approval")
				planOnly := fs.Bool("plan-only", false, "with [agent] planner_model: the first turn writes the plan and executes nothing; a message continues it")
				budget := fs.Float64("budget-usd", 0, "with --goal: the goal's cost budget per slice in `USD` (default [agent] goal_budget_usd)")
				ablate := fs.String("ablate", "", "`subagent` runs the task without delegation: no task, fleet or sub-agent skill (the delegation control arm)")
				wait := fs.Bool("wait", false, "follow the task until it ends, exiting like reasonix run")
				return clientAction(fs, func(c *client.Client, args []string, stdout, stderr io.Writer) error {
					prompt := strings.TrimSpace(strings.Join(args, " "))
					if prompt == "" {
						return usageErrorf("tasks submit needs a prompt")
					}
					if !(*budget >= 0) {
						return usageErrorf("--budget-usd must be a non-negative amount of USD")
					}
					if *budget > 0 && !*goal && !*planFirst {
						return usageErrorf("--budget-usd is a goal's cost budget; add --goal")
					}
					if *ablate != "" && *ablate != ablateSubagent {
						return usageErrorf("--ablate takes subagent")
					}
					if *planOnly && (*goal || *planFirst) {
						return usageErrorf("--plan-only plans one turn of a plain task; it cannot be combined with --goal or --plan-first")
					}
					sub, err := c.Submit(context.Background(), apitype.SubmitRequest{Prompt: prompt, Source: apitype.SourceCLI,
						Workspace: *ws, Posture: apitype.Posture(posture), Goal: *goal, PlanFirst: *planFirst, PlanOnly: *planOnly, BudgetUSD: *budget, Ablate: *ablate})
					if err != nil {
						return err
					}
					fmt.Fprintln(stdout, sub.ID)
					if !*wait {
						return nil
					}
					return watchExit(c, sub.ID, stdout)
				})
			},
		},
		{
			name: "watch", args: "ID", summary: "follow a task's events until it ends",
			about:   "Prints one line per event (an approval request with its preview) until the task ends, then exits\nas `reasonix run` would: 0 succeeded, 1 failed, 3 blocked, 4 budget exhausted, 130 cancelled or interrupted.",
			example: "reasonix tasks watch t_01hx…",
			flags: func(fs *flag.FlagSet) action {
				return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
					id, err := resolveID(c, "task", args[0], (*client.Client).ResolveTask)
					if err != nil {
						return err
					}
					return watchExit(c, id, stdout)
				})
			},
		},
		{
			name: "message", args: "ID TEXT...", summary: "steer a running task, answer a goal's question, continue a finished task",
			example: `reasonix tasks message t_01hx… "use the v2 API instead"`,
			flags: func(fs *flag.FlagSet) action {
				return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
					id, err := resolveID(c, "task", args[0], (*client.Client).ResolveTask)
					if err != nil {
						return err
					}
					t, err := c.Message(context.Background(), id, strings.Join(args[1:], " "))
					if err != nil {
						return notFound(err, "task", args[0])
					}
					fmt.Fprintf(stdout, "task %s: %s\n", t.ID, t.State)
					return nil
				})
			},
		},
		taskTransition("cancel", "cancel a queued, running or waiting task", "reasonix tasks cancel t_01hx…", (*client.Client).Cancel),
		taskTransition("resume", "resume an interrupted task, or one out of budget with a fresh budget", "reasonix tasks resume t_01hx…", (*client.Client).Resume),
		{
			name: "diff", args: "ID", summary: "print a task's changes against its base",
			about:   "Prints the task branch's diff against the commit it started from (git diff base...branch), read on the\nnode that ran the task.",
			example: "reasonix tasks diff t_01hx… | less",
			flags: func(fs *flag.FlagSet) action {
				return clientAction(fs, func(c *client.Client, args []string, stdout, stderr io.Writer) error {
					id, err := resolveID(c, "task", args[0], (*client.Client).ResolveTask)
					if err != nil {
						return err
					}
					return tasksDiff(c, id, stdout, stderr)
				})
			},
		},
	}
}

// taskTransition is `tasks cancel ID` or `tasks resume ID`: transition
// is the client's Cancel or Resume.
func taskTransition(name, summary, example string,
	transition func(c *client.Client, ctx context.Context, id string) (apitype.TaskRef, error)) *command {
	return &command{
		name: name, args: "ID", summary: summary, example: example,
		flags: func(fs *flag.FlagSet) action {
			return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
				id, err := resolveID(c, "task", args[0], (*client.Client).ResolveTask)
				if err != nil {
					return err
				}
				t, err := transition(c, context.Background(), id)
				if err != nil {
					return notFound(err, "task", args[0])
				}
				fmt.Fprintf(stdout, "task %s: %s\n", t.ID, t.State)
				return nil
			})
		},
	}
}

// resolveID turns what was typed for an id, whole or a unique prefix,
// into the id with resolve (the client's ResolveTask or ResolveApproval).
// An ambiguous prefix is a usage error listing the matches (exit 2). A
// prefix nothing starts with is passed on as it is, so the request made
// with it says "not found" as it would for any unknown id.
func resolveID(c *client.Client, what, arg string, resolve func(*client.Client, context.Context, string) (string, error)) (string, error) {
	id, err := resolve(c, context.Background(), arg)
	var amb *client.AmbiguousError
	switch {
	case errors.As(err, &amb):
		more := ""
		if amb.More {
			more = "\n  …"
		}
		return "", usageErrorf("%s id prefix %q matches more than one %s; give more of the id:\n  %s%s",
			what, arg, what, strings.Join(amb.Candidates, "\n  "), more)
	case errors.Is(err, client.ErrNotFound):
		return arg, nil
	case err != nil:
		return "", err
	}
	return id, nil
}

// tasksList is `reasonix tasks list`.
func tasksList(c *client.Client, state, source string, asJSON bool, stdout io.Writer) error {
	f := client.TaskFilter{Source: apitype.Source(source)}
	if state != "" {
		for s := range strings.SplitSeq(state, ",") {
			f.States = append(f.States, apitype.TaskState(s))
		}
	}
	page, err := c.Tasks(context.Background(), f)
	if err != nil {
		return err
	}
	if asJSON {
		if page.Tasks == nil {
			page.Tasks = []apitype.Task{}
		}
		return json.NewEncoder(stdout).Encode(page.Tasks)
	}
	if len(page.Tasks) == 0 {
		fmt.Fprintln(stdout, "no tasks")
		return nil
	}
	writeTaskTable(stdout, page.Tasks, time.Now(), columnsFor(stdout))
	return nil
}

// defaultColumns is the width a table fits when neither the terminal nor
// COLUMNS says: 80 columns is the narrowest a person still uses.
const defaultColumns = 80

// columnsFor is the width a table printed on w fits, as gh's do: the
// terminal's when w is one, else $COLUMNS (a positive number), else
// defaultColumns.
func columnsFor(w io.Writer) int {
	if f, ok := w.(*os.File); ok && isTerminal(w) {
		if n := terminalColumns(f); n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return defaultColumns
}

// minPrompt is the narrowest prompt column worth showing: below it the
// optional columns give way first.
const minPrompt = 16

// writeTaskTable prints tasks one a line within width columns, never
// wrapping: the id whole (it is what the other commands take), state,
// source and age as they are, and the prompt's first line in what is
// left, cut short with "…". When the prompt would get less than
// minPrompt columns, SOURCE and then CREATED are left out; a terminal
// narrower still gets each line cut at its edge.
func writeTaskTable(w io.Writer, tasks []apitype.Task, now time.Time, width int) {
	header := []string{"ID", "STATE", "SOURCE", "CREATED"}
	rows := make([][]string, len(tasks))
	for i, t := range tasks {
		rows[i] = []string{t.ID, string(t.State), string(t.Source), age(now.Sub(t.CreatedAt))}
	}
	const gap = 2
	keep := []int{0, 1, 2, 3}
	var widths []int
	left := 0
	for {
		widths = make([]int, len(keep))
		left = width
		for k, col := range keep {
			widths[k] = columns(header[col])
			for _, r := range rows {
				widths[k] = max(widths[k], columns(r[col]))
			}
			left -= widths[k] + gap
		}
		// SOURCE goes first, then CREATED; ID and STATE stay.
		if left >= minPrompt || len(keep) <= 2 {
			break
		}
		drop := 2
		if !slices.Contains(keep, 2) {
			drop = 3
		}
		keep = slices.DeleteFunc(keep, func(c int) bool { return c == drop })
	}
	line := func(cells []string, prompt string) {
		var b strings.Builder
		for k, col := range keep {
			v := cells[col]
			b.WriteString(v)
			b.WriteString(strings.Repeat(" ", widths[k]-columns(v)+gap))
		}
		if left > 0 {
			b.WriteString(cut(prompt, left))
		}
		fmt.Fprintln(w, cut(strings.TrimRight(b.String(), " "), width))
	}
	line(header, "PROMPT")
	for i, t := range tasks {
		line(rows[i], firstLine(t.Prompt))
	}
}

// columns is how many terminal columns s takes: one a rune (a wide
// character is counted as one, so a line of them may fall short of the
// edge, never past it once cut by cut).
func columns(s string) int { return utf8.RuneCountInString(s) }

// cut shortens s to at most n columns, its last one "…" when anything
// was cut; control characters become spaces, so a prompt cannot move the
// cursor or start a new line.
func cut(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if n <= 0 {
		return ""
	}
	if columns(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// age is how long ago something happened, in gh's short form: "now",
// "45s ago", "12m ago", "3h ago", "5d ago".
func age(d time.Duration) string {
	switch {
	case d < time.Second:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
}

// maxFactEvents bounds the events read for the instruction files a task
// used: a longer log tells what its first maxFactEvents say.
const maxFactEvents = 20000

// usedInstructions is what `tasks show` says of the instruction files a
// task's prompt held: each with its size, and the commit the
// repository's were read at.
type usedInstructions struct {
	files  []string // "AGENTS.md (1.2 KB)", "user:AGENTS.md (120 B)", "pkg/CLAUDE.md (33.0 KB, cut)"
	commit string   // short; "" when the files were read from a checkout as it is
}

// String is the line's text: "user:AGENTS.md (120 B), AGENTS.md (1.2 KB)
// at commit 0123456789ab".
func (u usedInstructions) String() string {
	s := strings.Join(u.files, ", ")
	if u.commit != "" {
		s += " at commit " + u.commit
	}
	return s
}

// taskInstructions collects the instruction files t's runs used from its
// events (none when they cannot be read: the line is then left out).
func taskInstructions(c *client.Client, t apitype.Task) usedInstructions {
	const batch = 1000
	var out usedInstructions
	for after, n := int64(0), 0; n < maxFactEvents; {
		evs, err := c.Events(context.Background(), t.ID, after, batch)
		if err != nil {
			return out
		}
		u := instructionsUsed(evs)
		out.files = append(out.files, u.files...)
		out.commit = cmp.Or(out.commit, u.commit)
		n += len(evs)
		if len(evs) < batch {
			break
		}
		after = evs[len(evs)-1].Seq
	}
	return out
}

// instructionsUsed lists the instruction files the "instructions" events
// of evs name with their sizes: "AGENTS.md (1.2 KB)", "user:AGENTS.md
// (120 B)", "pkg/CLAUDE.md (33.0 KB, cut)"; a skipped file is left out.
// The commit is the first run's (an event without "for").
func instructionsUsed(evs []apitype.Event) usedInstructions {
	var out usedInstructions
	for _, e := range evs {
		p, ok := apitype.InstructionsOf(e.Type, e.Payload)
		if !ok {
			continue
		}
		if out.commit == "" && p.For == "" {
			out.commit = apitype.ShortCommit(p.Commit)
		}
		for _, f := range p.Files {
			if f.Skipped != "" {
				continue
			}
			size := apitype.ByteSize(f.Bytes)
			if f.Truncated {
				size += ", cut"
			}
			out.files = append(out.files, f.Name()+" ("+size+")")
		}
	}
	return out
}

// timeFormat is how the CLI shows a time: in the local zone, named.
const timeFormat = "2006-01-02 15:04:05 MST"

// printTask prints t, with its time split by where it was when the
// service sent the split, and the instruction files its runs used.
func printTask(w io.Writer, t apitype.Task, instructions usedInstructions) {
	fmt.Fprintf(w, "task      %s\nstate     %s\nsource    %s (%s)\ncreated   %s\nprompt    %s\n",
		t.ID, t.State, t.Source, t.Requester, t.CreatedAt.Local().Format(timeFormat), t.Prompt)
	if t.FinishedAt != nil {
		fmt.Fprintf(w, "ended     %s\n", t.FinishedAt.Local().Format(timeFormat))
	}
	if d := t.Durations; d != nil {
		fmt.Fprintf(w, "time      %s\n", d)
	}
	if len(instructions.files) > 0 {
		fmt.Fprintf(w, "instructions used  %s\n", instructions)
	}
	if r := t.Result; r != nil {
		if r.Branch != "" {
			fmt.Fprintf(w, "branch    %s\n", r.Branch)
		}
		if r.DiffStat != "" {
			fmt.Fprintf(w, "changes\n%s\n", r.DiffStat)
		}
		if len(r.Deliverables) > 0 {
			fmt.Fprintf(w, "deliverables\n")
			for _, d := range r.Deliverables {
				fmt.Fprintf(w, "  %s (%d bytes)", d.Path, d.Bytes)
				if d.Description != "" {
					fmt.Fprintf(w, " — %s", d.Description)
				}
				fmt.Fprintln(w)
			}
		}
		if line := publishLine(r); line != "" {
			fmt.Fprintf(w, "published %s\n", line)
		}
		if r.PR != nil && r.PR.CI != nil {
			fmt.Fprintf(w, "ci        %s\n", ciLine(r.PR.CI))
		}
		fmt.Fprintf(w, "tokens    %d prompt + %d completion\n", r.Tokens.Prompt, r.Tokens.Completion)
		if len(r.Models) > 0 || r.Cost > 0 {
			models := make(map[string]store.ModelCost, len(r.Models))
			for name, m := range r.Models {
				models[name] = store.ModelCost{Calls: m.Calls, Tokens: agent.Usage(m.Tokens), Cost: m.Cost, Priced: m.Priced}
			}
			fmt.Fprintf(w, "cost      %s\n", costText(r.Cost, r.UnpricedTokens, models))
		}
		if d := r.Delegation; d != nil {
			fmt.Fprintf(w, "delegation %s\n", delegationLine(*d))
		}
		if r.Reason != "" {
			fmt.Fprintf(w, "why       %s\n", r.Reason)
		}
		if r.Error != "" {
			fmt.Fprintf(w, "error     %s\n", r.Error)
		}
		if r.FinalAnswer != "" {
			fmt.Fprintf(w, "\n%s\n", r.FinalAnswer)
		}
	}
}

// publishLine says what became of the task's branch on the forge:
// "PR #12 (open) https://…", "branch pushed", "nothing: the task changed
// nothing", "pending (…)", "failed: …"; "" without publishing.
func publishLine(r *apitype.Result) string {
	switch r.Publish {
	case "":
		return ""
	case "pr":
		if r.PR != nil {
			return fmt.Sprintf("PR #%d (%s) %s", r.PR.Number, r.PR.State, r.PR.URL)
		}
	case "branch":
		return "branch pushed, no pull request (mode = \"branch\")"
	case "unchanged":
		return "nothing: the task changed nothing"
	case "failed":
		return "failed: " + r.PublishError
	case "awaiting_approval":
		return "branch pushed; the pull request awaits an approval (mode = \"ask\")"
	case "pending":
		if r.PublishError != "" {
			return "pending: " + r.PublishError
		}
		return "pending"
	}
	return r.Publish
}

// tasksDiff is `reasonix tasks diff ID`: the task's changes against its
// base, as git prints them.
func tasksDiff(c *client.Client, id string, stdout, stderr io.Writer) error {
	d, err := c.Diff(context.Background(), id)
	if err != nil {
		return notFound(err, "task", id)
	}
	if d.Diff == "" {
		fmt.Fprintf(stderr, "task %s changed nothing on %s\n", id, d.Branch)
		return nil
	}
	if _, err := io.WriteString(stdout, d.Diff); err != nil {
		return err
	}
	if d.Truncated {
		fmt.Fprintln(stderr, "reasonix: the diff is longer than the service returns (8 MiB); fetch the branch for the rest")
	}
	return nil
}

// ciLine says how the CI a task waited for stands: "success 3/3 passing
// on 1a2b3c4d5e6f (1 fix)", with the failing checks named.
func ciLine(ci *apitype.CI) string {
	passing, failing := 0, []string(nil)
	for _, c := range ci.Checks {
		switch c.State {
		case "success":
			passing++
		case "failure":
			failing = append(failing, c.Name)
		}
	}
	line := fmt.Sprintf("%s %d/%d passing", ci.State, passing, len(ci.Checks))
	if sha := ci.Commit; sha != "" {
		line += " on " + sha[:min(12, len(sha))]
	}
	if ci.Fixes > 0 {
		line += fmt.Sprintf(" (%d fix attempt(s))", ci.Fixes)
	}
	if len(failing) > 0 {
		line += "; failing: " + strings.Join(failing, ", ")
	}
	return line
}

// delegationLine is a task's delegation counters on one line: "none"
// without a sub-agent, else the children's runs and every counter above 0
// by its JSON name ("2 sub-agents (1 nested), subagent_tool_calls 9, …").
func delegationLine(d apitype.Delegation) string {
	if d == (apitype.Delegation{}) {
		return "none (no sub-agent ran)"
	}
	line := plural(d.SubagentRuns, "sub-agent")
	if d.SubagentNestedRuns > 0 {
		line += fmt.Sprintf(" (%d nested)", d.SubagentNestedRuns)
	}
	for _, f := range []struct {
		name string
		n    int
	}{{"subagent_tool_calls", d.SubagentToolCalls}, {"subagent_mutations", d.SubagentMutations},
		{"duplicate_work_paths", d.DuplicateWorkPaths}, {"completion_reports", d.CompletionReports},
		{"completions_prose_only", d.CompletionsProseOnly}, {"false_completions", d.FalseCompletions},
		{"criterion_downgrades", d.CriterionDowngrades}, {"write_scope_violations", d.WriteScopeViolations}} {
		if f.n > 0 {
			line += fmt.Sprintf(", %s %d", f.name, f.n)
		}
	}
	return line
}
