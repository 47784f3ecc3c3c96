package runner_test

import (
	"context"
	"strings"
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// TestWorkerShowsTheModelAnImage: through the service's worker (the
// write-ahead journal and redaction wrap every tool), the picture
// view_image attaches reaches the next request, and only that one.
func TestWorkerShowsTheModelAnImage(t *testing.T) {
	ctx := context.Background()
	// A 1×1 GIF with no colour table: every byte is ASCII, so write_file
	// can make it from a JSON string.
	const gif = "GIF89a\x01\x00\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
	p := agenttest.NewScriptedProvider(
		calls(call("w", "write_file", map[string]string{"path": "dot.gif", "content": gif})),
		calls(call("v", "view_image", map[string]string{"path": "dot.gif"})),
		calls(call("l", "ls", map[string]string{})),
		answer("a dot"),
	)
	svc := runnertest.Start(t, runnertest.Options{Provider: p, Settings: settings(1), Vision: true})
	task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "look at the dot", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	if got := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed, store.StateBlocked); got.State != store.StateSucceeded {
		t.Fatalf("state %s: %+v", got.State, got.Result)
	}
	reqs := p.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	count := func(r agenttest.Request) (n int, data string) {
		for _, m := range r.Messages {
			for _, img := range m.Images {
				n, data = n+1, string(img.Data)
				if m.ToolCallID != "v" || img.MediaType != "image/gif" {
					t.Errorf("an image on %s %s as %s", m.Role, m.ToolCallID, img.MediaType)
				}
			}
		}
		return n, data
	}
	if n, data := count(reqs[2]); n != 1 || data != gif {
		t.Errorf("the request after view_image shows %d images (%q)", n, data)
	}
	for _, i := range []int{1, 3} {
		if n, _ := count(reqs[i]); n != 0 {
			t.Errorf("request %d shows %d images", i, n)
		}
	}
	if got := toolResult(p, "v"); !strings.HasPrefix(got, "dot.gif: image/gif, 1x1 pixels") {
		t.Errorf("view_image's result: %q", got)
	}
}
