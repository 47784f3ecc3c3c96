package agenttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"reasonix/agent"
)

// DecodeFunc is the shape of a provider's stream decoder (the one
// httpstream.DecodeFunc names): it reads one response body to its end.
type DecodeFunc = func(body io.Reader, emit func(agent.Chunk) bool, readErr func(error) *agent.ProviderError) (agent.Chunk, bool)

// FuzzDecode feeds decode the calling package's testdata/*.sse files, seeds
// and then the fuzzer's bodies. Whatever the body, decode must not panic,
// must pass on only complete tool calls (a name, an id and arguments) and
// no terminal chunk, and must end with a ChunkDone that has a finish reason
// or a ChunkError carrying a classified *agent.ProviderError; provider
// state, when there is any, is valid JSON.
func FuzzDecode(f *testing.F, decode DecodeFunc, seeds ...string) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.sse"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	readErr := func(err error) *agent.ProviderError {
		return &agent.ProviderError{Class: agent.ErrStream, Message: err.Error()}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		final, ok := decode(bytes.NewReader(body), func(c agent.Chunk) bool {
			switch {
			case c.Type == agent.ChunkDone || c.Type == agent.ChunkError:
				t.Fatalf("terminal chunk emitted before the end: %+v", c)
			case c.Type == agent.ChunkToolCall && (c.ToolCall == nil || c.ToolCall.Name == "" || c.ToolCall.ID == "" || c.ToolCall.Arguments == ""):
				t.Fatalf("incomplete tool call emitted: %+v", c.ToolCall)
			}
			return true
		}, readErr)
		if !ok {
			t.Fatalf("decode reported a departed consumer")
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
		if s := final.ProviderState; s != nil && !json.Valid(s) {
			t.Fatalf("invalid provider state %q", s)
		}
	})
}
