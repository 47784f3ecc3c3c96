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

// memoryCommands are `reasonix memory list|show|forget`: what agents
// remembered between tasks, through a running service's API.
func memoryCommands() []*command {
	return []*command{
		{
			name: "list", summary: "list the remembered facts the token may see, newest first",
			example: "reasonix memory list\nreasonix memory list --scope workspace:app --all --json",
			flags: func(fs *flag.FlagSet) action {
				scope := fs.String("scope", "", "only this scope: workspace:<name> or user:<principal>")
				all := fs.Bool("all", false, "forgotten memories too")
				limit := fs.Int("limit", 0, "at most this many (default 200)")
				asJSON := fs.Bool("json", false, "print the service's JSON")
				return clientAction(fs, func(c *client.Client, _ []string, stdout, _ io.Writer) error {
					list, err := c.Memories(context.Background(), client.MemoryFilter{Scope: *scope, All: *all, Limit: *limit})
					if err != nil {
						return err
					}
					if *asJSON {
						if list == nil {
							list = []apitype.Memory{}
						}
						return json.NewEncoder(stdout).Encode(list)
					}
					return printMemories(stdout, list)
				})
			},
		},
		{
			name: "show", args: "ID", summary: "show one remembered fact: text, scope, who saved it, from which task",
			example: "reasonix memory show mem_01hx…",
			flags: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print the service's JSON")
				return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
					m, err := c.Memory(context.Background(), args[0])
					if err != nil {
						return notFound(err, "memory", args[0])
					}
					if *asJSON {
						return json.NewEncoder(stdout).Encode(m)
					}
					fmt.Fprintf(stdout, "id:      %s\nscope:   %s\nby:      %s\ncreated: %s\n", m.ID, m.Scope, m.By, m.CreatedAt.Local().Format(time.DateTime))
					if m.TaskID != "" {
						fmt.Fprintf(stdout, "task:    %s\n", m.TaskID)
					}
					if m.ForgottenAt != nil {
						fmt.Fprintf(stdout, "forgotten: %s by %s\n", m.ForgottenAt.Local().Format(time.DateTime), m.ForgottenBy)
					}
					fmt.Fprintf(stdout, "\n%s\n", m.Text)
					return nil
				})
			},
		},
		{
			name: "forget", args: "ID", summary: "stop recalling a fact in later tasks (the record stays)",
			example: "reasonix memory forget mem_01hx…",
			flags: func(fs *flag.FlagSet) action {
				return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
					m, err := c.ForgetMemory(context.Background(), args[0])
					if err != nil {
						return notFound(err, "memory", args[0])
					}
					fmt.Fprintf(stdout, "memory %s (%s) forgotten by %s\n", m.ID, m.Scope, m.ForgottenBy)
					return nil
				})
			},
		},
	}
}

func printMemories(stdout io.Writer, list []apitype.Memory) error {
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no memories (a task's agent saves one with the remember tool)")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSCOPE\tBY\tCREATED\tSTATE\tTEXT")
	for _, m := range list {
		state := "active"
		if m.ForgottenAt != nil {
			state = "forgotten"
		}
		text := strings.Join(strings.Fields(m.Text), " ")
		if len(text) > 60 {
			text = strings.ToValidUTF8(text[:60], "") + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Scope, m.By, m.CreatedAt.Local().Format(time.DateTime), state, text)
	}
	return tw.Flush()
}
