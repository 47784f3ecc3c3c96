package runner

import (
	"context"
	"fmt"

	"reasonix/agent"
	"reasonix/agent/recipe"
	"reasonix/runner/internal/taskrun"
	"reasonix/runner/session"
	"reasonix/runner/store"
)

// runSession assembles the task's agent in ws and runs or continues it: a
// goal task (Goal or PlanFirst) through the goal controller, any other task
// as one agent run. An error means the session could not be assembled; how
// the run itself ended is in the outcome.
func (s *Service) runSession(ctx context.Context, r *taskrun.Run, ws *Workdir) (outcome, error) {
	task := r.Task()
	model, err := s.cfg.Providers("")
	if err != nil {
		return outcome{}, fmt.Errorf("provider: %w", err)
	}
	var grants []string
	if !firstRun(task) {
		if grants, err = s.st.Grants(ctx, task.ID); err != nil {
			return outcome{}, err
		}
	}
	// The skills (and the profiles among them) come from the task's base
	// commit, never from what the task itself wrote.
	skills, serr := s.taskSkills(ctx, ws)
	if serr != nil {
		s.log.Warn("runner: the repository's skills left out", "task", task.ID, "err", serr)
	}
	mem := &taskMemory{s: s, task: task}
	instr, ierr := s.taskInstructions(ctx, ws)
	if ierr != nil {
		s.log.Warn("runner: instruction files left out", "task", task.ID, "err", ierr)
	}
	sess, err := session.New(ctx, session.Config{
		Settings:     s.set,
		Policy:       s.pol,
		Workdir:      ws.Dir,
		Posture:      task.Posture,
		Model:        model,
		Models:       s.cfg.Providers,
		Prices:       s.prices,
		Approver:     &broker{s: s, task: task},
		Grants:       grants,
		Standing:     &taskStanding{s: s, task: task, targets: grantTargets(task)},
		Plugins:      s.taskPlugins(task, ws.Dir),
		ShellEnv:     s.cfg.ShellEnv,
		SystemPrompt: s.cfg.SystemPrompt,
		Instructions: instr.Text,
		DirInstructions: func(ctx context.Context, dirs []string) ([]recipe.File, error) {
			return s.baseInstructionFiles(ctx, ws, dirs...)
		},
		Observer:   r.Observer(ctx),
		Logger:     s.log.With("task", task.ID),
		Redactor:   s.redact,
		WrapTools:  r.Journaled,
		Skills:     skills,
		CacheScope: task.Requester,
		Memory:     mem,
		History:    &taskHistory{s: s, task: task},
		Recall:     mem.recall,
		HumanOnly:  memoryHumanOnly(task),
	})
	if err != nil {
		return outcome{}, err
	}
	defer sess.Close()
	tools := sess.Agent.Tools

	var history []agent.Message
	if !firstRun(task) {
		if history, err = s.st.Messages(ctx, task.ID); err != nil {
			return outcome{}, err
		}
	}
	r.SetStored(len(history))
	if len(history) == 0 && (len(instr.Files) > 0 || ierr != nil) {
		payload := map[string]any{"commit": ws.Base, "files": instr.Files}
		if ierr != nil {
			payload["error"] = "the repository's instruction files could not be read; see the service log"
		}
		r.Emit(instructionsEvent, payload)
	}
	// What the stored conversation read counts as read (agent.Observed).
	agent.Reobserve(sess.Env, history)
	history, err = r.RecoverJournal(ctx, history, tools)
	if err != nil {
		return outcome{}, err
	}
	inbox, err := s.st.TakeInbox(ctx, task.ID)
	if err != nil {
		return outcome{}, err
	}
	lost, err := s.lostChanges(ctx, r, ws, tools)
	if err != nil {
		return outcome{}, err
	}
	if lost != "" {
		r.SetLostNote(lost)
		// First in line: a conversation that had ended is continued by the
		// note; one that goes on reads it before its next request.
		inbox = append([]store.InboxMessage{{TaskID: task.ID, Text: lost}}, inbox...)
	}
	if task.Goal || task.PlanFirst {
		return s.runGoal(ctx, r, sess, history, inbox)
	}
	if task.Ablate == store.AblateSubagent {
		sess.NoDelegation()
	}
	if len(skills.Profiles().Names()) > 0 {
		// A sub-agent skill's child counts as a goal's task child does:
		// its spend and tokens are the task's, its steps the task's events.
		host, err := sess.SkillHost(session.GoalConfig{FleetObserver: sess.Agent.Observer, Child: r.Child(ctx)})
		if err != nil {
			return outcome{}, err
		}
		r.CountDelegation(host, nil)
		defer func() { s.metrics.addDelegation(host.Counters()) }()
	}
	base := sess.Agent
	base.History = history
	ag, err := agent.New(base)
	if err != nil {
		return outcome{}, err
	}
	r.SetAgent(ag)
	switch {
	case len(history) == 0 && task.PlanOnly:
		return s.planOnlyTurn(ctx, r, sess, ag, inbox), nil
	case len(history) == 0:
		return s.userTurn(ctx, r, sess, ag, task.Prompt, false, inbox), nil
	case len(inbox) > 0 && finalAnswer(history):
		// The lost-changes note is the host's words, not a person's.
		return s.userTurn(ctx, r, sess, ag, inbox[0].Text, lost != "" && inbox[0].Text == lost, inbox[1:]), nil
	case len(inbox) == 0 && finalAnswer(history):
		// A plan that waited for approval (plan-for-approval) resumes here.
		if o, ok, err := s.heldPlanDecided(ctx, r, ag, history); ok || err != nil {
			return o, err
		}
	}
	for _, m := range inbox {
		ag.Steer(m.Text)
	}
	return s.classify(ctx, r, ag.Continue(ctx)), nil
}

// firstRun reports whether task, as claimed, runs for the first time
// (attempt 1). Its conversation, its grants for the task and its budget
// cards are written by its runs alone, so a first run has none of them and
// reads none back (as taskrun.Run.SpendSoFar reads no spend); its inbox
// may hold messages posted while it was queued, and is read.
func firstRun(task store.Task) bool { return task.Attempt <= 1 }

// finalAnswer reports whether the conversation ends with an answer that
// has no calls pending, so continuing it needs a new user message. A
// checkpoint after the answer (/compact) changes nothing about that.
func finalAnswer(history []agent.Message) bool {
	i := len(history) - 1
	for i > 0 && history[i].Role == agent.RoleCheckpoint {
		i--
	}
	last := history[i]
	return last.Role == agent.RoleAssistant && len(last.ToolCalls) == 0
}

// expandReferences resolves the @ references of a person's text for the
// task's session (session.ExpandReferences). A webhook's text is a
// payload, data from outside: its @ words stay words.
func expandReferences(ctx context.Context, sess *session.Session, task store.Task, text string) string {
	if task.Source == store.SourceWebhook {
		return text
	}
	return sess.ExpandReferences(ctx, text)
}
