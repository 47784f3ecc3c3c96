package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"reasonix/agent"
)

func TestSuspendAndContinueRunsExactlyThePendingCalls(t *testing.T) {
	runs := map[string]int{}
	counting := func(name string, ro bool) *fakeTool {
		return &fakeTool{name: name, readOnly: ro, fn: func(context.Context, json.RawMessage) (string, error) {
			runs[name]++
			return name + " ok", nil
		}}
	}
	tools := func() *agent.ToolRegistry {
		return registry(t, counting("r1", true), counting("w1", false), counting("r2", true))
	}
	batch := callTools(
		agent.ToolCall{ID: "a", Name: "r1", Arguments: `{}`},
		agent.ToolCall{ID: "b", Name: "w1", Arguments: `{"x":1}`},
		agent.ToolCall{ID: "c", Name: "r2", Arguments: `{}`},
	)
	var asked []string
	parkWriters := agent.GateFunc(func(_ context.Context, c agent.Call) (agent.Verdict, error) {
		asked = append(asked, c.ID)
		if !c.ReadOnly {
			return agent.Verdict{}, fmt.Errorf("approval ap_1 pending: %w", agent.ErrSuspend)
		}
		return agent.Allow, nil
	})
	p := &script{replies: []func(agent.Request) []agent.Chunk{batch}}
	first := newAgent(t, agent.Config{Provider: p, Tools: tools(), Gate: parkWriters})
	res := first.Run(context.Background(), "go")
	if res.Outcome != agent.OutcomeSuspended || !errors.Is(res.Err, agent.ErrSuspend) {
		t.Fatalf("result = %+v", res)
	}
	saved := first.Messages()
	if len(saved) != 3 || saved[2].ToolCallID != "a" || runs["r1"] != 1 || runs["w1"] != 0 {
		t.Fatalf("after suspension: messages %+v, runs %v", saved, runs)
	}

	// Later, possibly in another process: the approval was given.
	var resumedAsk []agent.Call
	approved := agent.GateFunc(func(_ context.Context, c agent.Call) (agent.Verdict, error) {
		resumedAsk = append(resumedAsk, c)
		return agent.Allow, nil
	})
	p2 := &script{replies: []func(agent.Request) []agent.Chunk{say("finished")}}
	second := newAgent(t, agent.Config{Provider: p2, Tools: tools(), Gate: approved, History: saved})
	res = second.Continue(context.Background())
	if res.Outcome != agent.OutcomeSucceeded || res.FinalAnswer != "finished" {
		t.Fatalf("continued result = %+v", res)
	}
	if runs["r1"] != 1 || runs["w1"] != 1 || runs["r2"] != 1 {
		t.Errorf("runs = %v: a call ran twice or not at all", runs)
	}
	if len(resumedAsk) != 2 || resumedAsk[0].ID != "b" || string(resumedAsk[0].Args) != `{"x":1}` {
		t.Errorf("gate asked on resume: %+v", resumedAsk)
	}
	sent := p2.requests[0].Messages
	if n := len(sent); n != 5 || sent[3].ToolCallID != "b" || sent[4].ToolCallID != "c" {
		t.Errorf("continued conversation = %+v", sent)
	}
}

func TestContinueAfterFinalAnswerDoesNothing(t *testing.T) {
	p := &script{}
	a := newAgent(t, agent.Config{Provider: p, History: []agent.Message{
		{Role: agent.RoleUser, Content: "hi"}, {Role: agent.RoleAssistant, Content: "hello"},
	}})
	res := a.Continue(context.Background())
	if res.Outcome != agent.OutcomeSucceeded || res.FinalAnswer != "hello" || len(p.requests) != 0 {
		t.Fatalf("result = %+v, requests = %d", res, len(p.requests))
	}
}

func TestContinueAfterUserMessageAsksTheModel(t *testing.T) {
	p := &script{replies: []func(agent.Request) []agent.Chunk{say("answer")}}
	a := newAgent(t, agent.Config{Provider: p, History: []agent.Message{{Role: agent.RoleUser, Content: "question"}}})
	if res := a.Continue(context.Background()); res.Outcome != agent.OutcomeSucceeded || res.FinalAnswer != "answer" {
		t.Fatalf("result = %+v", res)
	}
}

func TestSteerAddsAMessageBeforeTheNextRequest(t *testing.T) {
	var a *agent.Agent
	steer := &fakeTool{name: "work", readOnly: true, fn: func(context.Context, json.RawMessage) (string, error) {
		a.Steer("also update the changelog")
		return "worked", nil
	}}
	p := &script{replies: []func(agent.Request) []agent.Chunk{
		callTools(agent.ToolCall{ID: "a", Name: "work", Arguments: `{}`}),
		say("done, changelog too"),
	}}
	a = newAgent(t, agent.Config{Provider: p, Tools: registry(t, steer)})
	if res := a.Run(context.Background(), "do the work"); res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("result = %+v", res)
	}
	sent := p.requests[1].Messages
	last := sent[len(sent)-1]
	if last.Role != agent.RoleUser || last.Content != "also update the changelog" || sent[len(sent)-2].ToolCallID != "a" {
		t.Errorf("second request ends with %+v", sent[len(sent)-2:])
	}
}
