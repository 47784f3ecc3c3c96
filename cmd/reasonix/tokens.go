package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"reasonix/policy"
	"reasonix/runner/store"
)

// tokensCommands are `reasonix tokens create|list|revoke`. They administer
// the service, so they open its store directly, as `reasonix migrate`
// does: whoever can read the configuration and the database is its
// administrator already, and no API token can mint another.
func tokensCommands() []*command {
	return []*command{
		{
			name: "create", args: "NAME", summary: "create an API token and print its secret once",
			about: "Creates a token for principal token:NAME and prints its secret on stdout, once: only its hash is kept.\n" +
				"Roles: submit (create tasks, read, message/cancel/resume its own tasks), approve (also decide\n" +
				"approvals of other principals' tasks), admin (everything). --max-posture is the highest posture its\n" +
				"tasks may ask for (default auto, yolo for admin).",
			example: "reasonix tokens create ci --role submit\nreasonix tokens create erin --role approve --max-posture yolo",
			flags: func(fs *flag.FlagSet) action {
				var role, posture string
				fs.Var(roleValue{&role}, "role", "`submit|approve|grant|admin`: what the token may do (required)")
				fs.Var(postureValue{&posture}, "max-posture", "`ask|auto|yolo`: the highest posture its tasks may ask for")
				file := configFileFlag(fs)
				return func(args []string, stdout, stderr io.Writer) error {
					if role == "" {
						return usageErrorf("tokens create needs --role submit, approve, grant or admin")
					}
					return withStore(*file, stderr, func(ctx context.Context, st *store.Store) error {
						t, secret, err := st.CreateToken(ctx, store.NewToken{Name: args[0], Role: store.Role(role), MaxPosture: policy.Posture(posture)})
						if err != nil {
							return tokenError(err)
						}
						fmt.Fprintln(stdout, secret)
						fmt.Fprintf(stderr, "created %s (%s, role %s, max posture %s); the secret above is shown only now\n",
							t.Principal(), t.ID, t.Role, t.MaxPosture)
						return nil
					})
				}
			},
		},
		{
			name: "list", summary: "list the API tokens (never their secrets)",
			example: "reasonix tokens list\nreasonix tokens list --json",
			flags: func(fs *flag.FlagSet) action {
				file := configFileFlag(fs)
				asJSON := fs.Bool("json", false, "print JSON: name, id, role, max_posture, created_at, last_used_at, revoked_at (never a secret)")
				return func(_ []string, stdout, stderr io.Writer) error {
					return withStore(*file, stderr, func(ctx context.Context, st *store.Store) error {
						return tokensList(ctx, st, *asJSON, stdout)
					})
				}
			},
		},
		{
			name: "revoke", args: "NAME|ID", summary: "revoke an API token; its next request is refused",
			about:   "Revokes a token by name or id. The service refuses it from the next request on (401). The name stays\ntaken, so tasks and decisions recorded under it keep meaning one principal.",
			example: "reasonix tokens revoke ci",
			flags: func(fs *flag.FlagSet) action {
				file := configFileFlag(fs)
				return func(args []string, stdout, stderr io.Writer) error {
					return withStore(*file, stderr, func(ctx context.Context, st *store.Store) error {
						before, err := st.RevokeToken(ctx, args[0])
						if errors.Is(err, store.ErrNotFound) {
							return fmt.Errorf("token %s not found (see reasonix tokens list)", args[0])
						}
						if err != nil {
							return err
						}
						fmt.Fprintf(stdout, "revoked %s (%s)\n", before.Principal(), before.ID)
						return nil
					})
				}
			},
		},
	}
}

// tokenError turns the store's message about bad input into a usage error.
func tokenError(err error) error {
	var ie *store.InputError
	if errors.As(err, &ie) {
		return usageErrorf("%s", ie.Msg)
	}
	return err
}

func when(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Local().Format(time.DateTime)
}

// roleValue is a --role flag, parsed at the flag edge by store.ParseRole.
type roleValue struct{ name *string }

func (v roleValue) String() string {
	if v.name == nil {
		return ""
	}
	return *v.name
}

func (v roleValue) Set(s string) error {
	r, err := store.ParseRole(strings.ToLower(strings.TrimSpace(s)))
	if err != nil {
		return errors.New("want submit, approve, grant or admin")
	}
	*v.name = string(r)
	return nil
}

// tokenView is one token in `tokens list --json`; times never set are
// left out.
type tokenView struct {
	Name       string     `json:"name"`
	ID         string     `json:"id"`
	Role       string     `json:"role"`
	MaxPosture string     `json:"max_posture,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

// tokensList is `reasonix tokens list`.
func tokensList(ctx context.Context, st *store.Store, asJSON bool, stdout io.Writer) error {
	list, err := st.Tokens(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		views := make([]tokenView, len(list))
		for i, t := range list {
			views[i] = tokenView{Name: t.Name, ID: t.ID, Role: string(t.Role), MaxPosture: string(t.MaxPosture), CreatedAt: t.CreatedAt,
				LastUsedAt: timeOrNil(t.LastUsedAt), RevokedAt: timeOrNil(t.RevokedAt)}
		}
		return json.NewEncoder(stdout).Encode(views)
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no tokens (the service registers its own when it starts)")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tROLE\tMAX POSTURE\tCREATED\tLAST USED\tSTATE")
	for _, t := range list {
		state := "active"
		if t.Revoked() {
			state = "revoked " + t.RevokedAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.ID, t.Role, t.MaxPosture,
			t.CreatedAt.Local().Format(time.DateTime), when(t.LastUsedAt), state)
	}
	return tw.Flush()
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
