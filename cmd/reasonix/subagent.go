package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"reasonix/agent"
)

// subagentCommands is `reasonix subagent try|run NAME TASK`.
func subagentCommands() []*command {
	return []*command{
		{
			name: "try", args: "NAME TASK...", summary: "run a sub-agent profile read-only on a task",
			about: "Runs the sub-agent profile NAME (.reasonix/skills/NAME/SKILL.md with runAs: subagent, or the same under\n" +
				"the Reasonix home) on TASK with read-only tools, whatever the profile allows, and prints its answer.",
			example: `reasonix subagent try reviewer "review cmd/reasonix/run.go"`,
			flags:   subagentFlags(true),
		},
		{
			name: "run", args: "NAME TASK...", summary: "run a sub-agent profile on a task with the normal permissions",
			about: "Runs the sub-agent profile NAME on TASK like a fleet's child: the profile's body is its whole system\n" +
				"prompt, its allowed-tools and read-only only narrow, and the posture (--posture, --auto) decides the rest;\n" +
				"nobody can be asked, so a call that needs a person is refused. Exit codes as for run.",
			example: `reasonix subagent run --auto fixer "make go vet pass"`,
			flags:   subagentFlags(false),
		},
	}
}

func subagentFlags(readOnly bool) func(*flag.FlagSet) action {
	return func(fs *flag.FlagSet) action {
		var o runOptions
		fs.StringVar(&o.configFile, "config", "", "configuration `file` (replaces ./reasonix.toml)")
		fs.StringVar(&o.workspace, "workspace", "", "`directory` the sub-agent works in (default: the current directory)")
		fs.StringVar(&o.model, "model", "", "the parent's model `reference`; the profile's model rules still apply")
		if !readOnly {
			fs.BoolVar(&o.auto, "auto", false, "allow ordinary writes in the workspace (same as --posture auto)")
			fs.Var(postureValue{&o.mode}, "posture", "`ask|auto|yolo`: the tool-approval posture (default [permissions] posture, ask)")
		}
		return func(args []string, stdout, stderr io.Writer) error {
			if code := subagentCommand(o, readOnly, args, stdout, stderr); code != exitOK {
				return &exitError{code: code}
			}
			return nil
		}
	}
}

func subagentCommand(o runOptions, readOnly bool, args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 || strings.TrimSpace(strings.Join(args[1:], " ")) == "" {
		return reportError(stderr, usageErrorf("subagent needs a profile name and a task, e.g. reasonix subagent try reviewer \"review run.go\""))
	}
	name, task := args[0], strings.Join(args[1:], " ")
	setup, err := prepareRun(o, stderr)
	if err != nil {
		return reportError(stderr, err)
	}
	defer setup.close()
	cfg, err := setup.session.Subagent(name, readOnly)
	if err != nil {
		return reportError(stderr, &configError{err})
	}
	ctx, stop := signalContext()
	defer stop()
	progress := newProgress(stderr)
	cfg.Observer = agent.Observers(textPrinter(stdout), progress.observe, setup.transcript.Observe)
	a, err := agent.New(cfg)
	if err != nil {
		return reportError(stderr, err)
	}
	res := a.Run(ctx, task)
	if res.FinalAnswer != "" && !strings.HasSuffix(res.FinalAnswer, "\n") {
		fmt.Fprintln(stdout)
	}
	progress.summary(res, setup.transcriptPath)
	return exitCode(res.Outcome)
}
