package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// TestSubmitOriginAndDedupeKeys: the origin is in the task's first event;
// any of several dedupe keys finds the first task; oversized origins and
// keys are refused before anything is written.
func TestSubmitOriginAndDedupeKeys(t *testing.T) {
	ctx := context.Background()
	svc := runnertest.Start(t, runnertest.Options{})
	req := runner.TaskRequest{Source: store.SourceWebhook, Requester: "webhook:ci", Prompt: "ci failed",
		DedupeKey: "ci:delivery:1", DedupeKeys: []string{"ci:sig:aa"}, Origin: map[string]string{"webhook": "ci", "delivery": "1"}}
	task, created, err := svc.Submit(ctx, req)
	if err != nil || !created {
		t.Fatalf("submit: %v created=%v", err, created)
	}
	evs := runnertest.Events(t, svc, task.ID, "task_state")
	var first struct {
		Origin map[string]string `json:"origin"`
	}
	if len(evs) == 0 || json.Unmarshal(evs[0].Payload, &first) != nil || first.Origin["delivery"] != "1" {
		t.Fatalf("first event: %+v", evs)
	}
	replay := req
	replay.DedupeKey, replay.DedupeKeys = "ci:delivery:2", []string{"ci:sig:aa"}
	if again, created, err := svc.Submit(ctx, replay); err != nil || created || again.ID != task.ID {
		t.Fatalf("replay: %s created=%v err=%v", again.ID, created, err)
	}
	for _, bad := range []runner.TaskRequest{
		{Source: store.SourceWebhook, Prompt: "x", Origin: map[string]string{"k": strings.Repeat("v", 300)}},
		{Source: store.SourceWebhook, Prompt: "x", DedupeKeys: []string{strings.Repeat("k", 300)}},
	} {
		if _, _, err := svc.Submit(ctx, bad); !errors.Is(err, runner.ErrInvalid) {
			t.Errorf("err = %v, want ErrInvalid", err)
		}
	}
	if page, _ := svc.Tasks(ctx, store.TaskFilter{}); len(page.Tasks) != 1 {
		t.Fatalf("%d tasks, want 1", len(page.Tasks))
	}
}
