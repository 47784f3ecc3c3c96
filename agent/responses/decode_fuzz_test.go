package responses

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/httpstream"
)

// FuzzDecode feeds arbitrary streams to the decoder: it must end with one
// terminal chunk, never panic, never pass on an incomplete function call,
// and keep only valid JSON as reasoning state.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("data: {\"type\":\"response.completed\"}\n\n"))
	f.Add([]byte("data: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":3,\"delta\":\"{\"}\n\n"))
	f.Add([]byte("data: {\"type\":\"error\",\"code\":42}\n\n"))
	p := &Provider{client: &httpstream.Client{Key: testKey, MaxOutputBytes: httpstream.DefaultMaxOutputBytes}}
	f.Fuzz(func(t *testing.T, in []byte) {
		d := decoder{p: p, readErr: func(err error) *agent.ProviderError { return p.client.StreamError(err.Error()) }}
		final, ok := d.decode(strings.NewReader(string(in)), func(c agent.Chunk) bool {
			if c.Type == agent.ChunkToolCall && (c.ToolCall.Name == "" || c.ToolCall.ID == "" || c.ToolCall.Arguments == "") {
				t.Fatalf("incomplete call %+v", c.ToolCall)
			}
			return true
		})
		if !ok || (final.Type != agent.ChunkDone && final.Type != agent.ChunkError) {
			t.Fatalf("final = %+v, %v", final, ok)
		}
		if final.Type == agent.ChunkError && final.Err == nil {
			t.Fatal("error chunk without an error")
		}
		if s := final.ProviderState; s != nil && !json.Valid(s) {
			t.Fatalf("invalid state %q", s)
		}
	})
}
