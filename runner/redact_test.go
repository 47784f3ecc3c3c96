package runner_test

import (
	"context"
	"strings"
	"testing"

	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// A secret the service knows never lands in a stored event or the task's
// result, even when a tool prints it: the tool's output is masked before
// the model, the journal or the event log see it.
func TestSecretsAreMaskedInEventsAndResults(t *testing.T) {
	const secret = "rx-secret-4f1c9a7be2"
	ctx := context.Background()
	rt := newRouter()
	p := rt.script("print it",
		calls(call("c1", "bash", map[string]string{"command": "echo the token is " + secret})),
		answer("The tool said: the token is [redacted]. Also "+secret))
	svc := runnertest.Start(t, runnertest.Options{Provider: rt, Configure: func(c *runner.Config) { c.Secrets = []string{secret} }})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "print it", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if done.State != store.StateSucceeded {
		t.Fatalf("state %s, result %+v", done.State, done.Result)
	}
	evs := runnertest.Events(t, svc, task.ID)
	var sawOutput bool
	for _, e := range evs {
		if strings.Contains(string(e.Payload), secret) {
			t.Errorf("event %s holds the secret: %s", e.Type, e.Payload)
		}
		sawOutput = sawOutput || e.Type == "tool_finished" && strings.Contains(string(e.Payload), "the token is [redacted]")
	}
	if !sawOutput {
		t.Error("the tool's masked output is not in its event")
	}
	if strings.Contains(done.Result.FinalAnswer, secret) || strings.Contains(done.Result.Summary, secret) {
		t.Errorf("result holds the secret: %+v", done.Result)
	}
	for _, r := range p.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && strings.Contains(m.Content, secret) {
				t.Fatal("the model was shown the secret")
			}
		}
	}
}
