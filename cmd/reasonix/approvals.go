package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"reasonix/runner/apitype"
	"reasonix/runner/client"
)

// approvalsCommands are `reasonix approvals list|show|allow|deny`.
func approvalsCommands() []*command {
	return []*command{
		{
			name: "list", summary: "list the approvals tasks wait on",
			example: "reasonix approvals list\nreasonix approvals list --all --json",
			flags: func(fs *flag.FlagSet) action {
				all := fs.Bool("all", false, "every approval, not only pending ones")
				asJSON := fs.Bool("json", false, "print the service's JSON")
				return clientAction(fs, func(c *client.Client, _ []string, stdout, _ io.Writer) error {
					return approvalsList(c, *all, *asJSON, stdout)
				})
			},
		},
		{
			name: "show", args: "ID", summary: "show what a call would do: the command, or the diff",
			example: "reasonix approvals show a_01hx…\nreasonix approvals show a_01hx --json",
			flags: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print the service's JSON")
				return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
					id, err := resolveID(c, "approval", args[0], (*client.Client).ResolveApproval)
					if err != nil {
						return err
					}
					a, err := c.Approval(context.Background(), id)
					if err != nil {
						return notFound(err, "approval", args[0])
					}
					if *asJSON {
						return json.NewEncoder(stdout).Encode(a)
					}
					printApproval(stdout, styleFor(stdout), a)
					return nil
				})
			},
		},
		{
			name: "allow", args: "ID", summary: "allow the call once, or for the rest of the task",
			example: "reasonix approvals allow a_01hx…\nreasonix approvals allow --scope 'Bash(go test:*)' a_01hx…",
			flags: func(fs *flag.FlagSet) action {
				forTask := fs.Bool("task", false, "allow calls like this one for the rest of the task (the first offered scope)")
				always := fs.Bool("always", false, "allow calls like this one in every later task of the workspace, schedule or webhook (grant or admin role)")
				grantFor := fs.String("grant-for", "", "with --always: `workspace|schedule|webhook` (default: the task's schedule or webhook, else its workspace)")
				scope := fs.String("scope", "", "the `scope` to grant (one of the offered scopes)")
				return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
					d := apitype.DecideRequest{Decision: apitype.AllowOnce}
					switch {
					case *always:
						d.Decision, d.Scope, d.GrantFor = apitype.AllowAlways, *scope, *grantFor
					case *forTask || *scope != "":
						d.Decision, d.Scope = apitype.AllowTask, *scope
					}
					return decide(c, args[0], d, stdout)
				})
			},
		},
		{
			name: "deny", args: "ID", summary: "refuse the call; the note reaches the model",
			example: `reasonix approvals deny --note "do not touch the migrations" a_01hx…`,
			flags: func(fs *flag.FlagSet) action {
				note := fs.String("note", "", "why, passed to the model (`text`)")
				publish := fs.Bool("publish", false, "a budget card: stop the task and publish what exists")
				return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
					d := apitype.DecideRequest{Decision: apitype.Deny, Note: *note}
					if *publish {
						d.Decision = apitype.StopPublish
					}
					return decide(c, args[0], d, stdout)
				})
			},
		},
	}
}

// decide posts a decision. The service records the token's principal as
// the approver; there is no name to give.
func decide(c *client.Client, arg string, d apitype.DecideRequest, stdout io.Writer) error {
	id, err := resolveID(c, "approval", arg, (*client.Client).ResolveApproval)
	if err != nil {
		return err
	}
	a, err := c.Decide(context.Background(), id, d)
	if err != nil {
		return notFound(err, "approval", arg)
	}
	fmt.Fprintf(stdout, "approval %s: %s by %s (task %s)\n", a.ID, a.Decision, a.DecidedBy, a.TaskID)
	return nil
}

// approvalsList is `reasonix approvals list`.
func approvalsList(c *client.Client, all, asJSON bool, stdout io.Writer) error {
	f := client.ApprovalFilter{State: apitype.ApprovalPending}
	if all {
		f.State = ""
	}
	list, err := c.Approvals(context.Background(), f)
	if err != nil {
		return err
	}
	if asJSON {
		if list == nil {
			list = []apitype.Approval{}
		}
		return json.NewEncoder(stdout).Encode(list)
	}
	if len(list) == 0 {
		if all {
			fmt.Fprintln(stdout, "no approvals")
		} else {
			fmt.Fprintln(stdout, "no approvals waiting")
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTASK\tSTATE\tTOOL\tEXPIRES\tSUBJECT")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.TaskID, a.State, a.Tool, approvalExpiry(a, time.TimeOnly), truncate(firstLine(a.Subject), 60))
	}
	return tw.Flush()
}

// approvalExpiry is a's deadline in layout, local time, or "no deadline"
// (approval_ttl = "none").
func approvalExpiry(a apitype.Approval, layout string) string {
	if a.ExpiresAt == nil {
		return "no deadline"
	}
	return a.ExpiresAt.Local().Format(layout)
}

// printApproval shows an approval for a person deciding it.
func printApproval(w io.Writer, st style, a apitype.Approval) {
	fmt.Fprintf(w, "approval  %s\ntask      %s\ntool      %s\nstate     %s", a.ID, a.TaskID, a.Tool, a.State)
	if a.State == apitype.ApprovalPending {
		if a.ExpiresAt == nil {
			fmt.Fprint(w, " (no deadline)")
		} else {
			fmt.Fprintf(w, " (expires %s)", approvalExpiry(a, time.DateTime))
		}
	} else if a.Decision != "" {
		fmt.Fprintf(w, " (%s by %s)", a.Decision, a.DecidedBy)
	}
	fmt.Fprintf(w, "\nrequester %s\n", a.Requester)
	if len(a.Scopes) > 0 {
		fmt.Fprintf(w, "scopes    %s\n", strings.Join(a.Scopes, ", "))
	}
	fmt.Fprintln(w)
	printPreview(w, st, "", cmpString(a.Preview, a.Subject))
	if a.State == apitype.ApprovalPending {
		fmt.Fprintf(w, "\nDecide with: reasonix approvals allow %s   or   reasonix approvals deny %s --note WHY\n", a.ID, a.ID)
	}
}

// printPreview writes a call's preview, each line after indent; a diff's
// added and removed lines are coloured when st allows.
func printPreview(w io.Writer, st style, indent, preview string) {
	for line := range strings.SplitSeq(strings.TrimRight(preview, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			line = st.bold(line)
		case strings.HasPrefix(line, "+"):
			line = st.green(line)
		case strings.HasPrefix(line, "-"):
			line = st.red(line)
		case strings.HasPrefix(line, "@@"):
			line = st.cyan(line)
		}
		fmt.Fprintf(w, "%s%s\n", indent, line)
	}
}
