package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"reasonix/runner/apitype"
	"reasonix/runner/client"
)

// grantsCommands are `reasonix grants list|revoke`: the standing grants
// ("Allow always") through a running service's API.
func grantsCommands() []*command {
	return []*command{
		{
			name: "list", summary: "list the standing grants: scope, for what, who granted it, uses",
			example: "reasonix grants list\nreasonix grants list --all --json",
			flags: func(fs *flag.FlagSet) action {
				all := fs.Bool("all", false, "revoked grants too")
				asJSON := fs.Bool("json", false, "print the service's JSON")
				return clientAction(fs, func(c *client.Client, _ []string, stdout, _ io.Writer) error {
					list, err := c.Grants(context.Background(), client.GrantFilter{All: *all})
					if err != nil {
						return err
					}
					if *asJSON {
						if list == nil {
							list = []apitype.Grant{}
						}
						return json.NewEncoder(stdout).Encode(list)
					}
					return printGrants(stdout, list, time.Now())
				})
			},
		},
		{
			name: "revoke", args: "ID", summary: "end a standing grant: its calls are asked again (grant or admin token)",
			example: "reasonix grants revoke sg_01hx…",
			flags: func(fs *flag.FlagSet) action {
				return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
					g, err := c.RevokeGrant(context.Background(), args[0])
					if err != nil {
						return notFound(err, "standing grant", args[0])
					}
					fmt.Fprintf(stdout, "grant %s (%s for %s %s) revoked by %s\n", g.ID, g.Scope, g.GrantFor, g.Name, g.RevokedBy)
					return nil
				})
			},
		},
	}
}

func printGrants(stdout io.Writer, list []apitype.Grant, now time.Time) error {
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no standing grants (an approver with the grant or admin role makes one with Allow always)")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSCOPE\tFOR\tGRANTED BY\tCREATED\tEXPIRES\tUSES\tSTATE")
	for _, g := range list {
		expires, state := "-", "active"
		if g.ExpiresAt != nil {
			expires = g.ExpiresAt.Local().Format(time.DateTime)
			if !now.Before(*g.ExpiresAt) {
				state = "expired"
			}
		}
		if g.RevokedAt != nil {
			state = "revoked by " + g.RevokedBy
		}
		fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\t%s\t%s\t%d\t%s\n", g.ID, g.Scope, g.GrantFor, g.Name, g.GrantedBy,
			g.CreatedAt.Local().Format(time.DateTime), expires, g.Uses, state)
	}
	return tw.Flush()
}
