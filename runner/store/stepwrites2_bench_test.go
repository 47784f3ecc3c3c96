package store_test

import (
	"context"
	"testing"

	"reasonix/agent"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// BenchmarkStepWrites stores a step as a run does now: the assistant
// message with the call's journal start and the events so far in one
// WriteStep, the process record, and the tool message with the outcome
// and the last event in another. Compare BenchmarkStepWritesSeparate.
func BenchmarkStepWrites(b *testing.B) {
	for name, open := range storetest.Openers {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			s := open(b, store.Config{})
			task := benchTask(b, s)
			i, stored := 0, int64(0)
			for b.Loop() {
				r := newStepRecords(i)
				i++
				res, err := s.WriteStep(ctx, task.ID, store.Step{After: stored, Messages: []agent.Message{r.asst},
					Start:  &store.JournalCall{CallID: r.key, Tool: "bash", ArgsHash: "h", Args: r.asst.ToolCalls[0].Arguments},
					Events: []store.EventInput{r.events[0], r.events[1], r.events[3]}})
				if err != nil || !res.Started {
					b.Fatal(res, err)
				}
				if err := s.JournalProcess(ctx, task.ID, r.key, `{"pgid":1}`); err != nil {
					b.Fatal(err)
				}
				res, err = s.WriteStep(ctx, task.ID, store.Step{After: res.Seq, Messages: []agent.Message{r.tool},
					Finish: []store.CallOutcome{{CallID: r.key, Result: "ok"}}, Events: r.events[2:3]})
				if err != nil {
					b.Fatal(err)
				}
				stored = res.Seq
			}
		})
	}
}
