package openai

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"reasonix/agent"
	"reasonix/agent/httpstream"
)

// FuzzDecode feeds arbitrary bodies to the stream decoder: it must never
// panic and must always end with exactly one ChunkDone or ChunkError, and
// every error must be a classified *agent.ProviderError.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"data: [DONE]\n\n",
		"data: {nope\n\n",
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{}"}}]}}]}` + "\n\ndata: [DONE]\n\n",
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1}]}}]}` + "\n\n",
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"f"}},{"id":"b","function":{"name":"g"}}]},"finish_reason":"tool_calls"}]}` + "\n\n",
		`data: {"error":{"message":"maximum context length exceeded","code":null}}` + "\n\n",
		`data: {"usage":{"prompt_tokens":1,"prompt_tokens_details":null}}` + "\n\ndata: [DONE]\n\n",
	} {
		f.Add([]byte(s))
	}
	p := &Provider{client: &httpstream.Client{Key: "sk-fuzz", MaxOutputBytes: httpstream.DefaultMaxOutputBytes}}
	f.Fuzz(func(t *testing.T, body []byte) {
		var chunks []agent.Chunk
		d := decoder{p: p, readErr: func(err error) *agent.ProviderError { return p.client.StreamError(err.Error()) }}
		final, ok := d.decode(bytes.NewReader(body), func(c agent.Chunk) bool {
			chunks = append(chunks, c)
			return true
		})
		if !ok {
			t.Fatalf("decode reported a departed consumer")
		}
		for _, c := range chunks {
			if c.Type == agent.ChunkDone || c.Type == agent.ChunkError {
				t.Fatalf("terminal chunk emitted before the end: %+v", c)
			}
			if c.Type == agent.ChunkToolCall && (c.ToolCall == nil || c.ToolCall.Name == "" || c.ToolCall.ID == "") {
				t.Fatalf("incomplete tool call emitted: %+v", c.ToolCall)
			}
		}
		switch final.Type {
		case agent.ChunkDone:
			if final.FinishReason == "" {
				t.Fatalf("done without a finish reason")
			}
		case agent.ChunkError:
			var pe *agent.ProviderError
			if !errors.As(final.Err, &pe) || pe.Class == nil {
				t.Fatalf("unclassified error %v", final.Err)
			}
		default:
			t.Fatalf("final chunk is %+v", final)
		}
	})
}
