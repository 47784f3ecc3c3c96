package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"reasonix/internal/redact"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

func TestHistoryVisible(t *testing.T) {
	task := store.Task{ID: "t_9", Workspace: "app", Requester: "token:alice"}
	for _, tc := range []struct {
		t    store.Task
		want bool
	}{
		{store.Task{ID: "t_1", Workspace: "app", Requester: "token:alice"}, true},
		{store.Task{ID: "t_2", Workspace: "app", Requester: "schedule:nightly"}, true},
		{store.Task{ID: "t_3", Workspace: "app", Requester: "webhook:ci"}, true},
		{store.Task{ID: "t_4", Workspace: "app", Requester: "token:bob"}, false},
		{store.Task{ID: "t_5", Workspace: "other", Requester: "token:alice"}, false},
		{store.Task{ID: "t_6", Workspace: "", Requester: "token:alice"}, false},
		{task, false},
	} {
		if got := historyVisible(task, tc.t); got != tc.want {
			t.Errorf("historyVisible(%+v) = %v, want %v", tc.t, got, tc.want)
		}
	}
}

// BenchmarkHistory10k is a history search over 10,000 past tasks of one
// workspace (budget: 20 ms): a read of what changed since the last search
// and a search of this node's index.
func BenchmarkHistory10k(b *testing.B) {
	for name, open := range storetest.Openers {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st := open(b, store.Config{})
			words := strings.Fields("build test deploy staging database queue worker cache lint release docs api cli config schema migration index token webhook cron")
			for i := range 10_000 {
				prompt := fmt.Sprintf("task %d: fix the %s of the %s in module m%d", i, words[i%len(words)], words[(i*7)%len(words)], i%97)
				t, _, err := st.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Requester: "token:alice", Prompt: prompt, Workspace: "repo", Posture: "auto"}, "")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := st.SetTaskState(ctx, t.ID, []store.State{t.State}, store.StateSucceeded,
					&store.StateOpts{Result: &store.Result{Summary: "done", FinalAnswer: "The " + words[(i*3)%len(words)] + " is fixed."}}); err != nil {
					b.Fatal(err)
				}
			}
			s := &Service{st: st, redact: redact.New("sk-unused-secret"), log: storetest.Quiet()}
			h := &taskHistory{s: s, task: store.Task{ID: "t_self", Workspace: "repo", Requester: "token:alice"}}
			hits, err := h.Search(ctx, "staging database of module m42", 5)
			if err != nil || len(hits) == 0 || !strings.Contains(hits[0].Info.Prompt, "m42") {
				b.Fatalf("search = %+v, %v", hits, err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := h.Search(ctx, "staging database of module m42", 5); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
