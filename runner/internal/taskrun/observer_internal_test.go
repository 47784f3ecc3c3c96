package taskrun

import (
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/internal/redact"
)

// What the store keeps of a message is masked everywhere it holds text: the
// visible content, a bounded result's full text and a checkpoint's pinned
// turns; the rest is kept as it is.
func TestRedactMessageCoversRawAndCheckpoint(t *testing.T) {
	r := redact.New("sk-very-secret-value")
	cp := &agent.Checkpoint{Task: "use sk-very-secret-value", Kept: []string{"again sk-very-secret-value"}, Tail: 3,
		Failures: []string{"bash:\nerror: token sk-very-secret-value rejected"}}
	in := agent.Message{Role: agent.RoleCheckpoint, Content: "digest sk-very-secret-value", RawContent: strings.Repeat("x", 10) + "sk-very-secret-value", Checkpoint: cp}
	out := redactMessage(r, in)
	for _, s := range []string{out.Content, out.RawContent, out.Checkpoint.Task, out.Checkpoint.Kept[0], out.Checkpoint.Failures[0]} {
		if strings.Contains(s, "sk-very-secret-value") || !strings.Contains(s, "[redacted]") {
			t.Fatalf("not masked: %q", s)
		}
	}
	if out.Checkpoint.Tail != 3 || cp.Task != "use sk-very-secret-value" {
		t.Fatalf("checkpoint %+v; the caller's copy changed: %q", out.Checkpoint, cp.Task)
	}
}
