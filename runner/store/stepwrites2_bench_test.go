package store_test

import (
	"context"
	"fmt"
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

// BenchmarkStepWriteCarried stores a step as a run does since results
// ride the next step: one WriteStep with the previous call's tool message
// and outcome, the assistant message, the call's journal start and the
// step's events. The process sub-benchmark adds the record of a process
// the call started (JournalProcess), which a sandbox that contains its
// commands (bubblewrap) does not write. Compare BenchmarkStepWrites.
func BenchmarkStepWriteCarried(b *testing.B) {
	for name, open := range storetest.Openers {
		for _, process := range []bool{false, true} {
			sub := name
			if process {
				sub += "/process"
			}
			b.Run(sub, func(b *testing.B) {
				ctx := context.Background()
				s := open(b, store.Config{})
				task := benchTask(b, s)
				i, stored := 0, int64(0)
				var prev *stepRecords
				for b.Loop() {
					r := newStepRecords(i)
					i++
					step := store.Step{After: stored, Messages: []agent.Message{r.asst},
						Start:  &store.JournalCall{CallID: r.key, Tool: "bash", ArgsHash: "h", Args: r.asst.ToolCalls[0].Arguments},
						Events: r.events}
					if prev != nil {
						step.Messages = []agent.Message{prev.tool, r.asst}
						step.Finish = []store.CallOutcome{{CallID: prev.key, Result: "ok"}}
						// The key counts the messages as a run numbers them.
						step.Start.CallID = fmt.Sprintf("%d/%s", stored+2, r.asst.ToolCalls[0].ID)
						r.key = step.Start.CallID
					} else {
						step.Start.CallID = fmt.Sprintf("%d/%s", stored+1, r.asst.ToolCalls[0].ID)
						r.key = step.Start.CallID
					}
					res, err := s.WriteStep(ctx, task.ID, step)
					if err != nil || !res.Started || len(res.Missed) != 0 {
						b.Fatal(res, err)
					}
					if process {
						if err := s.JournalProcess(ctx, task.ID, r.key, `{"pgid":1}`); err != nil {
							b.Fatal(err)
						}
					}
					stored, prev = res.Seq, &r
				}
			})
		}
	}
}
