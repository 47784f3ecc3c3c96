package responses

import (
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// TestReasoningSummaryStreamsAsThinking: a recorded o4-mini stream with a
// two-part reasoning summary. The summary arrives as ChunkThinking before
// the text, its parts as paragraphs; the reasoning item still travels
// back as state, and the summary is no part of the answer.
func TestReasoningSummaryStreamsAsThinking(t *testing.T) {
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "reasoning_summary.sse"))
	p, _ := newTestProvider(t, config(api))
	got := agenttest.Collect(t, p, agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "question"}}, Effort: "medium"})
	got.WantDone(t, "stop")
	want := "**Reading the question**\n\nThe user asks for the answer; it is forty-two.\n\n**Checking**\n\nNothing else is needed."
	if got.Thinking != want {
		t.Errorf("thinking %q, want %q", got.Thinking, want)
	}
	if got.Text != "The answer is forty-two." {
		t.Errorf("text %q", got.Text)
	}
	if items := reasoningItems(got.Final.ProviderState); len(items) != 1 || !strings.Contains(string(items[0]), "gAAAAABoofDESUMMARISEDREASONING==") {
		t.Errorf("state %s", got.Final.ProviderState)
	}
	// The request named an effort, so it asked for the summary.
	if body := api.Bodies()[0]; !strings.Contains(body, `"reasoning":{"effort":"medium","summary":"auto"}`) {
		t.Errorf("request %s", body)
	}
}

// TestNoSummaryWithoutAnEffort: a request that names no effort sends no
// reasoning object at all (a model without reasoning would refuse it).
func TestNoSummaryWithoutAnEffort(t *testing.T) {
	api := agenttest.NewReplayServer(t, agenttest.Recorded(t, "text.sse"))
	p, _ := newTestProvider(t, config(api))
	agenttest.Collect(t, p, agenttest.UserRequest("x")).WantDone(t, "stop")
	if body := api.Bodies()[0]; strings.Contains(body, `"reasoning"`) || strings.Contains(body, "summary") {
		t.Errorf("request %s", body)
	}
}

// TestRefusedSummaryIsAskedAgainWithout: an organisation not verified for
// reasoning summaries gets a 400; the request goes again at once without
// the summary (keeping the effort), and later requests never ask.
func TestRefusedSummaryIsAskedAgainWithout(t *testing.T) {
	api := agenttest.NewReplayServer(t,
		apiFailure(400, "invalid_request_error", "unsupported_value",
			"Your organization must be verified to generate reasoning summaries. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization.", nil),
		agenttest.Recorded(t, "text.sse"))
	p, rec := newTestProvider(t, config(api))
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}}, Effort: "high"}
	agenttest.Collect(t, p, req).WantDone(t, "stop")
	agenttest.Collect(t, p, req).WantDone(t, "stop")
	b := api.Bodies()
	if len(b) != 3 || !strings.Contains(b[0], `"summary":"auto"`) || strings.Contains(b[1], "summary") || strings.Contains(b[2], "summary") ||
		!strings.Contains(b[1], `"effort":"high"`) || !strings.Contains(b[1], "reasoning.encrypted_content") || len(rec.Waits()) != 0 {
		t.Fatalf("bodies %q, waits %v", b, rec.Waits())
	}
}

// TestReasoningTextStreamsAsThinking: an open model behind a Responses
// endpoint streams its reasoning's text (response.reasoning_text.delta);
// it is thinking too. An empty delta passes nothing on.
func TestReasoningTextStreamsAsThinking(t *testing.T) {
	body := `data: {"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}

data: {"type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":0,"delta":"Let me think"}

data: {"type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":0,"delta":""}

data: {"type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":0,"delta":" about it."}

data: {"type":"response.output_text.delta","item_id":"m","output_index":1,"content_index":0,"delta":"Done."}

data: {"type":"response.completed","response":{"status":"completed"}}

`
	api := agenttest.NewReplayServer(t, agenttest.Reply{Status: 200, Header: map[string]string{"Content-Type": "text/event-stream"}, Body: body})
	p, _ := newTestProvider(t, config(api))
	got := agenttest.Collect(t, p, agenttest.UserRequest("x"))
	got.WantDone(t, "stop")
	if got.Thinking != "Let me think about it." || got.Text != "Done." {
		t.Errorf("thinking %q, text %q", got.Thinking, got.Text)
	}
}
