package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"reasonix/agent"
	"reasonix/goals"
	"reasonix/runner/session"
)

type runOptions struct {
	configFile string
	model      string
	auto       bool
	mode       string
	maxSteps   int
	json       bool
	workspace  string
	goal       bool
	trust      bool
	maxCost    float64
	ablate     string
	planOnly   bool
}

// runFlags registers run's flags; the action runs the task with them.
func runFlags(fs *flag.FlagSet) action {
	var o runOptions
	fs.StringVar(&o.configFile, "config", "", "configuration `file` (replaces ./reasonix.toml)")
	fs.StringVar(&o.model, "model", "", "model `reference`: a provider name, a model name or provider/model")
	fs.BoolVar(&o.auto, "auto", false, "allow ordinary writes in the workspace without asking (same as --posture auto)")
	fs.BoolVar(&o.auto, "y", false, "short for --auto")
	fs.Var(postureValue{&o.mode}, "posture", "`ask|auto|yolo`: the tool-approval posture; ask refuses what needs a human (default [permissions] posture, ask)")
	deprecated := &deprecatedFlag{Value: postureValue{&o.mode}}
	fs.Var(deprecated, "permission-mode", "`ask|auto|yolo`: deprecated, use --posture")
	fs.IntVar(&o.maxSteps, "max-steps", 0, "stop after `N` model requests (default [agent] max_steps, 100)")
	fs.Float64Var(&o.maxCost, "max-cost", 0, "stop once the run's priced model calls cost `USD` (exit 4; default: no limit)")
	fs.BoolVar(&o.json, "json", false, "print one JSON object with the result on stdout instead of the streamed answer")
	fs.StringVar(&o.workspace, "workspace", "", "`directory` the agent works in (default: the current directory)")
	fs.BoolVar(&o.trust, "trust", false, "obey this directory's own reasonix.toml and .mcp.json in full for this run (see reasonix trust)")
	fs.BoolVar(&o.planOnly, "plan-only", false, "with [agent] planner_model: write the plan and stop; nothing is executed")
	fs.BoolVar(&o.goal, "goal", false, "run the task as a goal: keep going until it is complete or blocked, with sub-agent fleets")
	fs.StringVar(&o.ablate, "ablate", "", "`subagent`: run the control arm without delegation (no task or fleet tool, no sub-agent skill), to measure whether it pays")
	return func(args []string, stdout, stderr io.Writer) error {
		if deprecated.used {
			fmt.Fprintln(stderr, "reasonix: --permission-mode is deprecated; use --posture")
		}
		if code := runCommand(o, args, stdout, stderr); code != exitOK {
			return &exitError{code: code}
		}
		return nil
	}
}

// runCommand is `reasonix run`: one task, headless, with honest exit codes.
func runCommand(o runOptions, positional []string, stdout, stderr io.Writer) int {
	task := strings.TrimSpace(strings.Join(positional, " "))
	if task == "" {
		return reportError(stderr, &commandError{"run", usageErrorf("run needs a task, e.g. reasonix run \"fix the failing test\"")})
	}
	if o.maxSteps < 0 {
		return reportError(stderr, &commandError{"run", usageErrorf("--max-steps must be positive")})
	}
	if o.ablate != "" && o.ablate != ablateSubagent {
		return reportError(stderr, &commandError{"run", usageErrorf("--ablate takes subagent, got %q", o.ablate)})
	}
	if !(o.maxCost >= 0) || o.maxCost > 1e9 {
		return reportError(stderr, &commandError{"run", usageErrorf("--max-cost must be a non-negative amount of USD")})
	}

	if o.planOnly && o.goal {
		return reportError(stderr, &commandError{"run", usageErrorf("--plan-only plans one turn; it cannot be combined with --goal")})
	}

	setup, err := prepareRun(o, stderr)
	if err != nil {
		return reportError(stderr, err)
	}
	defer setup.close()
	if o.planOnly && !setup.session.PlannerConfigured() {
		// Without a planner the turn would go to the executor: refuse
		// rather than run what was asked only to be planned.
		return reportError(stderr, &commandError{"run", usageErrorf("--plan-only needs [agent] planner_model naming a model other than the executor's")})
	}
	if task, err = runPrompt(setup.cfg, setup.session, setup.session.Env.Workdir, task, stderr); err != nil {
		return reportError(stderr, &commandError{"run", err})
	}

	ctx, stop := signalContext()
	defer stop()
	ctx, stopCost := context.WithCancelCause(ctx)
	defer stopCost(nil)
	setup.cost = newCostMeter(setup.cfg, o.maxCost, stopCost)

	progress := newProgress(stderr)
	var observers []agent.Observer
	if !o.json {
		observers = append(observers, textPrinter(stdout))
	}
	observers = append(observers, progress.observe, setup.transcript.Observe, setup.cost.observe)
	setup.observer = agent.Observers(observers...)
	// @path and @server:uri in the task become tagged blocks after it.
	pristine := task
	task = setup.session.ExpandReferences(ctx, task)
	if o.goal {
		return goalCommand(ctx, setup, pristine, task, o, progress, stdout, stderr)
	}
	if o.ablate == ablateSubagent {
		setup.session.NoDelegation()
	}
	// children sums what run_skill's sub-agents did; host counts them.
	children := &goalTotals{}
	var host *goals.Host
	if len(setup.session.Skills().Profiles().Names()) > 0 {
		// A sub-agent skill's child costs, prints and is recorded as a goal's
		// task child is, and its tokens, steps and calls are the run's.
		childObserver := agent.Observers(children.observe, progress.childObserve, setup.transcript.Observe, setup.cost.observe)
		if host, err = setup.session.SkillHost(session.GoalConfig{Child: func(_ goals.ChildSpec, tools *agent.ToolRegistry) (*agent.ToolRegistry, agent.Observer, error) {
			return tools, childObserver, nil
		}}); err != nil {
			return reportError(stderr, &commandError{"run", err})
		}
	}
	a, err := agent.New(setup.session.Agent)
	if err != nil {
		return reportError(stderr, err)
	}
	// The Coordinator routes the turn ([agent] planner_model, §3.5): the
	// executor runs with the plan, or the turn ends with the plan alone.
	var res agent.Result
	if c := setup.session.Coordinate(ctx, session.Turn{Text: pristine, Input: task, PlanOnly: o.planOnly}); c.Execute {
		res = a.Run(ctx, c.Input)
	} else {
		res = setup.session.Hold(c)
		if !o.json && res.FinalAnswer != "" {
			fmt.Fprint(stdout, res.FinalAnswer)
		}
	}
	if setup.cost.spent(ctx) {
		// The budget, not a person, stopped it: budget_exhausted, exit 4.
		res.Outcome, res.Err = agent.OutcomeStepLimit, costBudgetError(setup.cost.reason())
	}
	res = children.addTo(res)
	if !o.json && res.FinalAnswer != "" && !strings.HasSuffix(res.FinalAnswer, "\n") {
		fmt.Fprintln(stdout)
	}
	if err := setup.transcript.Err(); err != nil {
		fmt.Fprintf(stderr, "reasonix: warning: %v\n", err)
	}
	progress.summary(res, setup.transcriptPath)
	setup.cost.summary(stderr)
	if o.json {
		var counters goals.Counters
		if host != nil {
			counters = host.Counters()
		}
		if err := writeJSONResult(stdout, res, setup.transcriptPath, setup.cost.json(), o.ablate, counters); err != nil {
			fmt.Fprintf(stderr, "reasonix: %v\n", err)
			return exitFailed
		}
	}
	return exitCode(res.Outcome)
}

// goalCommand finishes `reasonix run --goal`: 0 complete, 3 blocked (or a
// question for the requester), 4 budget, 130 interrupted, 1 failed.
func goalCommand(ctx context.Context, setup *runSetup, pristine, task string, o runOptions, p *progress, stdout, stderr io.Writer) int {
	totals := &goalTotals{}
	setup.observer = agent.Observers(setup.observer, totals.observe)
	start := time.Now()
	res, err := runGoal(ctx, setup, pristine, task, totals, o.ablate == ablateSubagent, stderr)
	if err != nil {
		return reportError(stderr, err)
	}
	if setup.cost.spent(ctx) {
		res.Outcome, res.Reason, res.Err = goals.StatusBudget, setup.cost.reason(), nil
	}
	d := time.Since(start)
	if !o.json && res.FinalAnswer != "" && !strings.HasSuffix(res.FinalAnswer, "\n") {
		fmt.Fprintln(stdout)
	}
	p.mu.Lock()
	goalSummary(p.w, res, totals, d)
	setup.cost.summary(p.w)
	if setup.transcriptPath != "" {
		fmt.Fprintf(p.w, "reasonix: transcript %s\n", setup.transcriptPath)
	}
	p.w.Flush()
	p.mu.Unlock()
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		out := goalResultJSON(res, totals, d, setup.transcriptPath, setup.cost.json())
		out.Ablate = o.ablate
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "reasonix: %v\n", err)
			return exitFailed
		}
	}
	return session.ExitCode(session.GoalEnd(res.Outcome).State)
}

// signalContext is cancelled by the first SIGINT or SIGTERM; a second one
// exits at once, for a run that does not stop in time.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(fmt.Errorf("interrupted by %s", signalName(s)))
		case <-done:
			return
		}
		select {
		case <-sigs:
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// signalName is the name people know a signal by: Go prints SIGTERM as
// "terminated", which reads badly after "interrupted by".
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// jsonResult is the --json output: the contract of docs/SPEC.md.
type jsonResult struct {
	Status       string      `json:"status"`
	Outcome      string      `json:"outcome"`
	FinalAnswer  string      `json:"final_answer"`
	Steps        int         `json:"steps"`
	ToolCalls    int         `json:"tool_calls"`
	RefusedCalls int         `json:"refused_calls"`
	Tokens       agent.Usage `json:"tokens"`
	DurationMS   int64       `json:"duration_ms"`
	Error        string      `json:"error,omitempty"`
	Transcript   string      `json:"transcript,omitempty"`
	costJSON
	// Ablate names the removed arm ("subagent") of an ablation run.
	Ablate string `json:"ablate,omitempty"`
	// The ten delegation counters (seed §3.17), beside tool_calls.
	goals.Counters
}

func writeJSONResult(w io.Writer, res agent.Result, transcript string, cost costJSON, ablate string, counters goals.Counters) error {
	out := jsonResult{
		Ablate:       ablate,
		Counters:     counters,
		Status:       status(res.Outcome),
		Outcome:      outcomeDetail(res),
		FinalAnswer:  res.FinalAnswer,
		Steps:        res.Steps,
		ToolCalls:    res.ToolCalls,
		RefusedCalls: res.RefusedCalls,
		Tokens:       res.Usage,
		DurationMS:   res.Duration.Milliseconds(),
		Transcript:   transcript,
		costJSON:     cost,
	}
	if res.Err != nil {
		out.Error = errorSummary(res.Err)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// status maps an outcome to the task-state vocabulary the service uses too.
func status(o agent.Outcome) string { return string(session.AgentEnd(o).State) }

// outcomeDetail says why the run ended, in a word a script can match.
func outcomeDetail(res agent.Result) string {
	switch res.Outcome {
	case agent.OutcomeSucceeded:
		return "completed"
	case agent.OutcomeBlocked:
		return "refused"
	case agent.OutcomeStepLimit:
		if errors.Is(res.Err, errCostBudget) {
			return "cost_budget"
		}
		return "step_limit"
	case agent.OutcomeInterrupted:
		return "interrupted"
	default:
		return agent.Reason(res.Err)
	}
}

// errorSummary is what a person should read about a failed run.
func errorSummary(err error) string {
	var pe *agent.ProviderError
	if errors.As(err, &pe) {
		switch {
		case errors.Is(err, agent.ErrRejected) && (pe.Status == 401 || pe.Status == 403):
			return fmt.Sprintf("the model provider rejected the API key (HTTP %d); check the key in the variable named by api_key_env", pe.Status)
		case errors.Is(err, agent.ErrContextTooLong):
			return "the conversation no longer fits the model's context window"
		}
	}
	return err.Error()
}

// transcriptFile creates the run's JSONL transcript under the data dir.
func transcriptFile(dataDir string) (*os.File, string, error) {
	dir := filepath.Join(dataDir, "transcripts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("creating the transcript directory: %w", err)
	}
	name := filepath.Join(dir, fmt.Sprintf("run-%s-%d.jsonl", time.Now().UTC().Format("20060102T150405Z"), os.Getpid()))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("creating the transcript: %w", err)
	}
	return f, name, nil
}
