package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"reasonix/internal/redact"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// BenchmarkRecall10k is the recall before a turn with 10,000 memories in
// the task's scopes (budget: 5 ms): one epoch read and a search of this
// node's index, which is built once per change anywhere.
func BenchmarkRecall10k(b *testing.B) {
	for name, open := range storetest.Openers {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st := open(b, store.Config{})
			task := store.Task{ID: "t_1", Workspace: "repo", Requester: "token:alice"}
			words := strings.Fields("build test deploy staging database queue worker cache lint release docs api cli config schema migration index token webhook cron")
			for i := range 10_000 {
				sc := memoryScopes(task)[i%2]
				text := fmt.Sprintf("fact %d: the %s step uses the %s and %s settings of module m%d", i, words[i%len(words)], words[(i*7)%len(words)], words[(i*13)%len(words)], i%97)
				if _, _, err := st.AddMemory(ctx, store.NewMemory{Scope: sc, Text: text, By: "token:alice"}); err != nil {
					b.Fatal(err)
				}
			}
			s := &Service{st: st, redact: redact.New("sk-unused-secret"), log: storetest.Quiet(), now: time.Now}
			m := &taskMemory{s: s, task: task}
			if note := m.recall(ctx, "how does the staging deploy use the database of module m42?"); !strings.Contains(note, "m42") {
				b.Fatalf("recall = %q", note)
			}
			b.ResetTimer()
			for b.Loop() {
				m.recall(ctx, "how does the staging deploy use the database of module m42?")
			}
		})
	}
}
