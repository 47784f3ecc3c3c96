package relay_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// plannerRig is a rig whose [agent] planner_model is set; the scripted
// model answers the planner's requests (told apart by its system prompt)
// with plan, and counts and answers the executor's with exec.
func plannerRig(t *testing.T, plan string, executed *atomic.Int32, exec func(agenttest.Request) agenttest.Turn) *rig {
	set := config.Default()
	set.Runner.MaxConcurrentTasks = 2
	set.Agent.PlannerModel = "plan-model"
	return newRigWith(t, set, func(req agenttest.Request) agenttest.Turn {
		if strings.HasPrefix(req.Messages[0].Content, "You are the planner of a coding agent") {
			return agenttest.Turn{Text: plan, Usage: agent.Usage{Prompt: 50, Completion: 5}}
		}
		executed.Add(1)
		return exec(req)
	})
}

// TestChatPlanOnlyThenGoAhead: a mention asking for a plan only gets the
// plan as the thread's report and nothing executes; a reply in the thread
// continues from the persisted plan and the executor carries it out.
func TestChatPlanOnlyThenGoAhead(t *testing.T) {
	var executed atomic.Int32
	r := plannerRig(t, "1. split store.go into read.go and write.go", &executed, func(req agenttest.Request) agenttest.Turn {
		for _, m := range req.Messages {
			if m.Role == agent.RoleAssistant && strings.Contains(m.Content, "1. split store.go") {
				return agenttest.Turn{Text: "split done", Usage: agent.Usage{Prompt: 10, Completion: 1}}
			}
		}
		return agenttest.Turn{Text: "no plan in sight"}
	})
	mention := r.slack.Mention(alice, channel, "", "Refactor the store package into two files, plan only")
	var taskID string
	eventually(t, "the task", func() bool {
		id, err := r.st.ThreadTask(context.Background(), "slack", channel, mention.TS)
		taskID = id
		return err == nil && id != ""
	})
	done := runnertest.WaitState(t, r.svc, taskID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || !strings.Contains(done.Result.FinalAnswer, "1. split store.go") || executed.Load() != 0 {
		t.Fatalf("task = %s %+v, executor asked %d times", done.State, done.Result, executed.Load())
	}
	eventually(t, "the plan in the thread", func() bool { return strings.Contains(r.threadText(mention.TS), "1. split store.go") })

	r.slack.Reply(alice, channel, mention.TS, "go ahead")
	eventually(t, "the executor to go on from the plan", func() bool {
		return strings.Contains(r.threadText(mention.TS), "split done") || strings.Contains(r.threadText(mention.TS), "no plan in sight")
	})
	if !strings.Contains(r.threadText(mention.TS), "split done") || executed.Load() != 1 {
		t.Fatalf("executor asked %d times; thread:\n%s", executed.Load(), r.threadText(mention.TS))
	}
}

// TestChatPlanVerbIsPlanOnly: with a planner, the plan verb submits a
// plan-only task: the plan is the thread's report, nothing executes (the
// text does not ask for a plan only), and the task says plan_only.
func TestChatPlanVerbIsPlanOnly(t *testing.T) {
	var executed atomic.Int32
	r := plannerRig(t, "1. move the cache into its own package", &executed, func(agenttest.Request) agenttest.Turn {
		return agenttest.Turn{Text: "moved"}
	})
	mention := r.slack.Mention(alice, channel, "", "plan move the cache into its own package and update every caller")
	var taskID string
	eventually(t, "the task", func() bool {
		id, err := r.st.ThreadTask(context.Background(), "slack", channel, mention.TS)
		taskID = id
		return err == nil && id != ""
	})
	done := runnertest.WaitState(t, r.svc, taskID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked, store.StateWaitingApproval)
	if done.State != store.StateSucceeded || !done.PlanOnly || done.PlanFirst || done.Goal || !strings.Contains(done.Result.FinalAnswer, "1. move the cache") || executed.Load() != 0 {
		t.Fatalf("task = %s plan_only %v plan_first %v %+v, executor asked %d times", done.State, done.PlanOnly, done.PlanFirst, done.Result, executed.Load())
	}
	eventually(t, "the plan in the thread", func() bool { return strings.Contains(r.threadText(mention.TS), "1. move the cache") })
}

// TestChatPlanForApproval: a mention asking to wait for approval posts the
// planner's plan as an approval with buttons; nothing executes before an
// approver allows it.
func TestChatPlanForApproval(t *testing.T) {
	var executed atomic.Int32
	r := plannerRig(t, "1. rewrite the scheduler loop", &executed, func(agenttest.Request) agenttest.Turn {
		return agenttest.Turn{Text: "rewritten", Usage: agent.Usage{Prompt: 10, Completion: 1}}
	})
	mention := r.slack.Mention(alice, channel, "", "Rewrite the scheduler and wait for my approval before you change code")
	ap := r.approvalMessage(t, mention.TS)
	if !strings.Contains(ap.Text, "1. rewrite the scheduler loop") || executed.Load() != 0 {
		t.Fatalf("approval message %+v, executor asked %d times", ap, executed.Load())
	}
	taskID, err := r.st.ThreadTask(context.Background(), "slack", channel, mention.TS)
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, r.svc, taskID, 10*time.Second, store.StateWaitingApproval)
	r.slack.Click(bob, channel, ap.TS, ap.Buttons[0].Value)
	done := runnertest.WaitState(t, r.svc, taskID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded || done.Result.FinalAnswer != "rewritten" || executed.Load() != 1 {
		t.Fatalf("task = %s %+v, executor asked %d times", done.State, done.Result, executed.Load())
	}
}
