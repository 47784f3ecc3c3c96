package anthropic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/httpstream"
)

// FuzzDecode feeds arbitrary streams to the decoder: it must end with one
// terminal chunk, never panic, and never pass on a tool call without a name.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("data: {\"type\":\"message_stop\"}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"error\"}\n\n"))
	p := &Provider{client: &httpstream.Client{Key: testKey, MaxOutputBytes: httpstream.DefaultMaxOutputBytes}}
	f.Fuzz(func(t *testing.T, in []byte) {
		d := decoder{p: p, readErr: func(err error) *agent.ProviderError { return p.client.StreamError(err.Error()) }}
		final, ok := d.decode(strings.NewReader(string(in)), func(c agent.Chunk) bool {
			if c.Type == agent.ChunkToolCall && (c.ToolCall.Name == "" || c.ToolCall.Arguments == "") {
				t.Fatalf("incomplete tool call %+v", c.ToolCall)
			}
			return true
		})
		if !ok || (final.Type != agent.ChunkDone && final.Type != agent.ChunkError) {
			t.Fatalf("final = %+v, %v", final, ok)
		}
		if final.Type == agent.ChunkError && final.Err == nil {
			t.Fatal("error chunk without an error")
		}
	})
}
