package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

func settings(maxTasks int) *config.Config {
	set := config.Default()
	set.Runner.MaxConcurrentTasks = maxTasks
	return set
}

// TestTaskSucceeds: an API task writes a file under the auto posture and
// ends succeeded, with its transcript, journal, events and result stored.
func TestTaskSucceeds(t *testing.T) {
	ctx := context.Background()
	rt := newRouter()
	p := rt.script("write a greeting",
		calls(call("c1", "write_file", map[string]string{"path": "hello.txt", "content": "hi\n"})),
		answer("I wrote hello.txt.\n\nDetails follow."))
	var scratch string
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Configure: func(c *runner.Config) { scratch = c.ScratchDir }})
	task, created, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Requester: "api:alice",
		Prompt: "write a greeting", Posture: "auto", DedupeKey: "k1"})
	if err != nil || !created || task.State != store.StateQueued {
		t.Fatalf("Submit = %+v, %v, %v", task, created, err)
	}
	again, created, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "write a greeting", DedupeKey: "k1"})
	if err != nil || created || again.ID != task.ID {
		t.Fatalf("duplicate Submit = %s, %v, %v; want the first task", again.ID, created, err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("state = %s, result %+v", done.State, done.Result)
	}
	if done.Result == nil || done.Result.Summary != "I wrote hello.txt." || done.Result.Tokens.Prompt != 100 {
		t.Fatalf("result = %+v", done.Result)
	}
	b, err := os.ReadFile(filepath.Join(scratch, task.ID, "hello.txt"))
	if err != nil || string(b) != "hi\n" {
		t.Fatalf("hello.txt = %q, %v", b, err)
	}
	if p.Remaining() != 0 {
		t.Fatalf("%d turns left", p.Remaining())
	}
	for _, typ := range []string{"tool_started", "tool_finished", "final_report", "run_finished"} {
		if len(runnertest.Events(t, svc, task.ID, typ)) == 0 {
			t.Errorf("no %s event", typ)
		}
	}
	rep := runnertest.Events(t, svc, task.ID, "final_report")
	var fr map[string]any
	if err := json.Unmarshal(rep[0].Payload, &fr); err != nil || fr["state"] != "succeeded" {
		t.Fatalf("final_report = %s", rep[0].Payload)
	}
}

// TestSubmitValidation: bad requests are refused with ErrInvalid and leave
// no task behind.
func TestSubmitValidation(t *testing.T) {
	ctx := context.Background()
	svc := runnertest.Start(t, runnertest.Options{})
	for name, req := range map[string]runner.TaskRequest{
		"empty prompt":      {Source: store.SourceAPI, Prompt: "  "},
		"huge prompt":       {Source: store.SourceAPI, Prompt: string(make([]byte, runner.MaxPromptBytes+1))},
		"bad posture":       {Source: store.SourceAPI, Prompt: "x", Posture: "reckless"},
		"unknown workspace": {Source: store.SourceAPI, Prompt: "x", Workspace: "nope"},
		"bad source":        {Source: "carrier-pigeon", Prompt: "x"},
	} {
		if _, _, err := svc.Submit(ctx, req); !errors.Is(err, runner.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	page, err := svc.Tasks(ctx, store.TaskFilter{})
	if err != nil || len(page.Tasks) != 0 {
		t.Fatalf("tasks after bad input = %d, %v", len(page.Tasks), err)
	}
}
