package runner_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"reasonix/agent"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestJournalFinishedWithToolMessages: every call of a run — a writer
// alone, three calls in one batch, then another writer — is finished in
// the journal with the result its tool message reports, in the same
// commit as that message, on both stores: the outcome is written with the
// message, not on its own, nor when the run ends. The results of a step
// ride with the next step's write (one commit per step), so while the
// model is asked for the next step the previous step's calls are still
// open, and the stored tool messages always match the finished entries.
func TestJournalFinishedWithToolMessages(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t, store.Config{})
			rt := newRouter()
			rt.script("journal each call",
				calls(call("w1", "write_file", map[string]string{"path": "a.txt", "content": "alpha\n"}),
					call("r1", "read_file", map[string]string{"path": "a.txt"}),
					call("r2", "read_file", map[string]string{"path": "missing.txt"})),
				calls(bashCall("b1", "cat a.txt; echo done")),
				answer("finished"))
			var taskID atomic.Value
			var unfinished []int // per model request: calls started and not finished
			check := func() {
				id, _ := taskID.Load().(string)
				un, err := st.UnfinishedCalls(ctx, id)
				if err != nil {
					t.Error(err)
				}
				unfinished = append(unfinished, len(un))
				all, err := st.Journal(ctx, id)
				if err != nil {
					t.Error(err)
				}
				msgs, err := st.Messages(ctx, id)
				if err != nil {
					t.Error(err)
				}
				answered := 0
				for _, m := range msgs {
					if m.Role == agent.RoleTool {
						answered++
					}
				}
				if finished := len(all) - len(un); answered != finished {
					t.Errorf("stored: %d tool messages, %d finished journal entries; want them written together", answered, finished)
				}
			}
			svc := runnertest.Start(t, runnertest.Options{Provider: checking{rt, check}, Store: st})
			task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI, Prompt: "journal each call", Posture: "yolo"})
			if err != nil {
				t.Fatal(err)
			}
			taskID.Store(task.ID)
			if done := runnertest.WaitState(t, svc, task.ID, 0, store.StateSucceeded, store.StateFailed); done.State != store.StateSucceeded {
				t.Fatalf("state = %s, result %+v", done.State, done.Result)
			}
			// The first request has no call before it; the second and
			// third find the previous step's three calls and one call
			// open, their results held for the next step's write — or
			// none, on a machine slow enough that the hold (taskrun.StepLinger)
			// ran out first and wrote them on their own.
			if want := []int{0, 3, 1}; len(unfinished) != len(want) ||
				slices.ContainsFunc([]int{0, 1, 2}, func(i int) bool { return unfinished[i] != want[i] && unfinished[i] != 0 }) {
				t.Errorf("unfinished calls at each model request = %v; want %v", unfinished, want)
			}
			msgs, err := st.Messages(ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			reported := map[string]string{} // journal key -> the tool message's text
			var asst int
			for i, m := range msgs {
				switch m.Role {
				case agent.RoleAssistant:
					asst = i + 1
				case agent.RoleTool:
					reported[callKey(asst, m.ToolCallID)] = m.Content
				}
			}
			entries, err := st.Journal(ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 4 || len(reported) != 4 {
				t.Fatalf("journal has %d entries and the transcript %d tool messages; want 4 each", len(entries), len(reported))
			}
			for _, e := range entries {
				text, ok := reported[e.CallID]
				if e.FinishedAt.IsZero() || !ok || e.Result != text {
					t.Errorf("journal %s: finished %v, result %q; its tool message says %q (found %v)", e.CallID, !e.FinishedAt.IsZero(), e.Result, text, ok)
				}
				if isErr := e.CallID == callKey(2, "r2"); e.IsError != isErr {
					t.Errorf("journal %s: is_error %v, want %v", e.CallID, e.IsError, isErr)
				}
			}
		})
	}
}

// checking calls check before each model request.
type checking struct {
	agent.Provider
	check func()
}

func (c checking) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	c.check()
	return c.Provider.Stream(ctx, req)
}

// callKey is the journal's name of a call: "<assistant message seq>/<call id>".
func callKey(asstSeq int, callID string) string { return fmt.Sprintf("%d/%s", asstSeq, callID) }
