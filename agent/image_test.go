package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"reasonix/agent"
)

// TestImageTravelsOnTheNextRequestOnly: an image a tool attaches reaches
// the request right after its result, is gone from the one after (the
// text stays, so that request's prefix is what was sent before), and no
// event or transcript line carries its bytes.
func TestImageTravelsOnTheNextRequestOnly(t *testing.T) {
	pixels := []byte("\x89PNG\r\n\x1a\nnot really pixels but unique bytes")
	look := &fakeTool{name: "look", readOnly: true, fn: func(ctx context.Context, _ json.RawMessage) (string, error) {
		if err := agent.AttachImage(ctx, agent.Image{MediaType: "image/png", Data: pixels}); err != nil {
			return "", err
		}
		return "shows a.png", nil
	}}
	broken := &fakeTool{name: "broken", readOnly: true, fn: func(ctx context.Context, _ json.RawMessage) (string, error) {
		_ = agent.AttachImage(ctx, agent.Image{MediaType: "image/png", Data: pixels})
		return "", errors.New("could not finish")
	}}
	p := &script{replies: []func(agent.Request) []agent.Chunk{
		callTools(agent.ToolCall{ID: "c1", Name: "look", Arguments: `{}`}, agent.ToolCall{ID: "c2", Name: "broken", Arguments: `{}`}),
		callTools(agent.ToolCall{ID: "c3", Name: "broken", Arguments: `{}`}),
		say("it is a cat"),
	}}
	var log bytes.Buffer
	tr := agent.NewTranscript(&log)
	a := newAgent(t, agent.Config{Provider: p, Tools: registry(t, look, broken), Gate: allowAll, Observer: tr.Observe})
	res := a.Run(context.Background(), "what is in a.png?")
	if res.Outcome != agent.OutcomeSucceeded {
		t.Fatalf("result = %+v", res)
	}
	if len(p.requests) != 3 {
		t.Fatalf("%d requests", len(p.requests))
	}
	imagesOf := func(req agent.Request, id string) ([]agent.Image, bool) {
		for _, m := range req.Messages {
			if m.Role == agent.RoleTool && m.ToolCallID == id {
				return m.Images, true
			}
		}
		return nil, false
	}
	got, ok := imagesOf(p.requests[1], "c1")
	if !ok || len(got) != 1 || got[0].MediaType != "image/png" || !bytes.Equal(got[0].Data, pixels) {
		t.Fatalf("second request, result c1: images %v (found %v)", got, ok)
	}
	if got, _ := imagesOf(p.requests[1], "c2"); len(got) != 0 {
		t.Errorf("a failed call showed %d images", len(got))
	}
	if got, ok := imagesOf(p.requests[2], "c1"); !ok || len(got) != 0 {
		t.Errorf("third request, result c1: %d images (found %v); an image travels once", len(got), ok)
	}
	for _, m := range a.Messages() {
		if len(m.Images) != 0 {
			t.Errorf("the conversation still holds an image on %s %s", m.Role, m.ToolCallID)
		}
	}
	if bytes.Contains(log.Bytes(), []byte("not really pixels")) || bytes.Contains(log.Bytes(), []byte("bm90IHJlYWxseSBwaXhlbHM")) {
		t.Error("the transcript carries the image's bytes")
	}
	if !bytes.Contains(log.Bytes(), []byte("shows a.png")) {
		t.Error("the transcript lost the tool's text")
	}
}

func TestAttachImageOutsideACall(t *testing.T) {
	err := agent.AttachImage(context.Background(), agent.Image{MediaType: "image/png", Data: []byte("x")})
	if !errors.Is(err, agent.ErrNoImages) {
		t.Fatalf("err = %v, want ErrNoImages", err)
	}
}
