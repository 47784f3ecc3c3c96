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

// schedulesCommands are `reasonix schedules list|run|pause|resume`.
func schedulesCommands() []*command {
	change := func(verb, summary, example string,
		change func(c *client.Client, ctx context.Context, name string) (apitype.Schedule, error)) *command {
		return &command{
			name: verb, args: "NAME", summary: summary, example: example,
			flags: func(fs *flag.FlagSet) action {
				return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
					s, err := change(c, context.Background(), args[0])
					if err != nil {
						return notFound(err, "schedule", args[0])
					}
					state := "active, next run " + inZone(s.NextRun, s.Timezone)
					if s.Paused {
						state = "paused"
					}
					fmt.Fprintf(stdout, "schedule %s: %s\n", s.Name, state)
					return nil
				})
			},
		}
	}
	return []*command{
		{
			name: "list", summary: "list the schedules: next run, last run and its outcome, paused",
			example: "reasonix schedules list\nreasonix schedules list --json",
			flags: func(fs *flag.FlagSet) action {
				asJSON := fs.Bool("json", false, "print the service's JSON")
				return clientAction(fs, func(c *client.Client, _ []string, stdout, _ io.Writer) error {
					return schedulesList(c, *asJSON, stdout)
				})
			},
		},
		{
			name: "run", args: "NAME", summary: "start a run of a schedule now (an admin token is needed)",
			about:   "Starts a run now, whatever the cron expression says, also when the schedule is paused or a run is\nstill going. It counts towards max_failures like any run.",
			example: "reasonix schedules run nightly-deps\nreasonix schedules run --wait nightly-deps",
			flags: func(fs *flag.FlagSet) action {
				wait := fs.Bool("wait", false, "follow the run to its end; exit as `reasonix run` would")
				return clientAction(fs, func(c *client.Client, args []string, stdout, _ io.Writer) error {
					out, err := c.RunSchedule(context.Background(), args[0])
					if err != nil {
						return notFound(err, "schedule", args[0])
					}
					fmt.Fprintf(stdout, "schedule %s: started task %s\n", args[0], out.TaskID)
					if *wait {
						return watchExit(c, out.TaskID, stdout)
					}
					return nil
				})
			},
		},
		change("pause", "stop a schedule from firing until resumed (kept across restarts)", "reasonix schedules pause nightly-deps", (*client.Client).PauseSchedule),
		change("resume", "let a paused schedule fire again from now on, without catching up", "reasonix schedules resume nightly-deps", (*client.Client).ResumeSchedule),
	}
}

// schedulesList is `reasonix schedules list`.
func schedulesList(c *client.Client, asJSON bool, stdout io.Writer) error {
	list, err := c.Schedules(context.Background())
	if err != nil {
		return err
	}
	if asJSON {
		if list == nil {
			list = []apitype.Schedule{}
		}
		return json.NewEncoder(stdout).Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no schedules are configured")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCRON\tTIMEZONE\tNEXT RUN\tLAST RUN\tOUTCOME\tHEALTH")
	for _, s := range list {
		health := s.Health
		if s.HealthReason != "" { // "failing: its last 2 run(s) failed, …"
			health += ": " + s.HealthReason
		}
		outcome := s.LastOutcome
		if outcome == "" {
			outcome = "-"
		}
		if s.Skipped > 0 {
			outcome += fmt.Sprintf(" (%d skipped)", s.Skipped)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Cron, s.Timezone,
			inZone(s.NextRun, s.Timezone), inZone(s.LastRun, s.Timezone), outcome, health)
	}
	return tw.Flush()
}

// inZone shows t in the schedule's own zone, with the zone's abbreviation,
// so a run around a daylight-saving change reads as the schedule means it.
func inZone(t *time.Time, zone string) string {
	if t == nil {
		return "-"
	}
	if loc, err := time.LoadLocation(zone); err == nil {
		return t.In(loc).Format("2006-01-02 15:04:05 MST")
	}
	return t.UTC().Format("2006-01-02 15:04:05 MST")
}
