package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"reasonix/runner/store"
)

// rolesCommands are `reasonix roles grant|list|revoke`: the roles of chat
// identities, which authenticate through their platform and so carry no
// token. Like `tokens`, they open the store directly.
func rolesCommands() []*command {
	return []*command{
		{
			name: "grant", args: "PRINCIPAL", summary: "give a Slack or Telegram identity a role",
			about: "PRINCIPAL is slack:<team id>/<user id> or telegram:<user id> (immutable ids, never display names).\n" +
				"With approve (or admin) the identity may decide approvals from chat, as the configured approvers may;\n" +
				"it still never decides the calls of its own tasks. A second grant replaces the first.",
			example: "reasonix roles grant slack:T0123/U0456 --role approve\nreasonix roles grant telegram:123456789 --role approve",
			flags: func(fs *flag.FlagSet) action {
				var role string
				fs.Var(roleValue{&role}, "role", "`submit|approve|grant|admin`: what the identity may do (required)")
				file := configFileFlag(fs)
				return func(args []string, stdout, stderr io.Writer) error {
					if role == "" {
						return usageErrorf("roles grant needs --role submit, approve, grant or admin")
					}
					return withStore(*file, stderr, func(ctx context.Context, st *store.Store) error {
						pr, err := st.GrantRole(ctx, args[0], store.Role(role))
						if err != nil {
							return tokenError(err)
						}
						fmt.Fprintf(stdout, "granted %s to %s\n", pr.Role, pr.Principal)
						return nil
					})
				}
			},
		},
		{
			name: "list", summary: "list the roles granted to chat identities",
			example: "reasonix roles list\nreasonix roles list --json",
			flags: func(fs *flag.FlagSet) action {
				file := configFileFlag(fs)
				asJSON := fs.Bool("json", false, "print JSON: principal, role, created_at")
				return func(_ []string, stdout, stderr io.Writer) error {
					return withStore(*file, stderr, func(ctx context.Context, st *store.Store) error {
						return rolesList(ctx, st, *asJSON, stdout)
					})
				}
			},
		},
		{
			name: "revoke", args: "PRINCIPAL", summary: "take a chat identity's role away",
			example: "reasonix roles revoke slack:T0123/U0456",
			flags: func(fs *flag.FlagSet) action {
				file := configFileFlag(fs)
				return func(args []string, stdout, stderr io.Writer) error {
					return withStore(*file, stderr, func(ctx context.Context, st *store.Store) error {
						err := st.RevokeRole(ctx, args[0])
						if errors.Is(err, store.ErrNotFound) {
							return fmt.Errorf("%s has no role (see reasonix roles list)", args[0])
						}
						if err != nil {
							return err
						}
						fmt.Fprintf(stdout, "revoked the role of %s\n", args[0])
						return nil
					})
				}
			},
		},
	}
}

// roleView is one granted role in `roles list --json`.
type roleView struct {
	Principal string    `json:"principal"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

// rolesList is `reasonix roles list`.
func rolesList(ctx context.Context, st *store.Store, asJSON bool, stdout io.Writer) error {
	list, err := st.PrincipalRoles(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		views := make([]roleView, len(list))
		for i, pr := range list {
			views[i] = roleView{Principal: pr.Principal, Role: string(pr.Role), CreatedAt: pr.CreatedAt}
		}
		return json.NewEncoder(stdout).Encode(views)
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no roles granted (the [bot] approvers lists still apply)")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PRINCIPAL\tROLE\tGRANTED")
	for _, pr := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", pr.Principal, pr.Role, pr.CreatedAt.Local().Format(time.DateTime))
	}
	return tw.Flush()
}
