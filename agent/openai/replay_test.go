package openai

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
)

// TestReplayRecordedStreams plays the wire captures in testdata through a
// plain HTTP server, so the decoder meets formats the fake server does not
// produce (CRLF, comments, usage beside finish_reason, null content).
func TestReplayRecordedStreams(t *testing.T) {
	tests := []struct {
		file   string
		text   string
		calls  []agent.ToolCall
		usage  []agent.Usage
		finish string
		class  error
	}{
		{file: "text.sse", text: "Hello, world — 你好!", usage: []agent.Usage{{Prompt: 12, Completion: 6}}, finish: "stop"},
		{file: "tool_call_split.sse", calls: []agent.ToolCall{{ID: "call_XyZ9", Name: "read_file", Arguments: `{"path": "main.go"}`}},
			usage: []agent.Usage{{Prompt: 80, Completion: 19}}, finish: "tool_calls"},
		{file: "parallel_tool_calls.sse", text: "Reading both.", calls: []agent.ToolCall{
			{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.go"}`},
			{ID: "call_b", Name: "grep", Arguments: `{"pattern":"TODO"}`}}, finish: "tool_calls"},
		{file: "usage_cached.sse", text: "OK", usage: []agent.Usage{{Prompt: 2048, Completion: 3, Cached: 1920}}, finish: "stop"},
		{file: "error_mid_stream.sse", text: "Let me", class: agent.ErrStream},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(body)
			}))
			defer srv.Close()
			p, _ := newTestProvider(t, agent.ProviderConfig{BaseURL: srv.URL})
			got := agenttest.Collect(t, p, agenttest.UserRequest("hi"))
			if got.Text != tt.text {
				t.Errorf("text = %q, want %q", got.Text, tt.text)
			}
			if !slices.Equal(got.Calls, tt.calls) {
				t.Errorf("calls = %+v, want %+v", got.Calls, tt.calls)
			}
			if !slices.Equal(got.Usage, tt.usage) {
				t.Errorf("usage = %+v, want %+v", got.Usage, tt.usage)
			}
			if tt.class != nil {
				if got.Final.Type != agent.ChunkError || !errors.Is(got.Final.Err, tt.class) {
					t.Fatalf("final = %+v, want error of class %v", got.Final, tt.class)
				}
				return
			}
			if got.Final.Type != agent.ChunkDone || got.Final.FinishReason != tt.finish {
				t.Errorf("final = %+v, want done with %q", got.Final, tt.finish)
			}
		})
	}
}
