package main

import (
	"bytes"
	"strings"
	"testing"
)

// tasks watch reads a compaction from the event stream as run's progress
// shows it.
func TestWatchShowsACompaction(t *testing.T) {
	var buf bytes.Buffer
	v := newWatchView(&buf)
	v.show(streamEvent{Seq: 7, Type: "context_compacted", Payload: []byte(`{"step":12,"mode":"fallback","reason":"the summary call failed","before_tokens":7300,"after_tokens":1500}`)})
	v.show(streamEvent{Seq: 8, Type: "context_compacted", Payload: []byte(`{"step":30,"mode":"failed","reason":"no digest and tail fit under half the window","before_tokens":7400,"after_tokens":7400}`)})
	v.close()
	out := buf.String()
	for _, want := range []string{
		"⇣ context compacted (fallback): ~7300 → ~1500 tokens: the summary call failed",
		"⇣ context compaction failed at ~7400 tokens: no digest and tail fit under half the window",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("watch printed %q\nwant a line %q", out, want)
		}
	}
}
