package store_test

import (
	"context"
	"errors"
	"testing"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// testJournalProcess: an unfinished call carries the process it started;
// finishing the call drops it, and a finished call cannot get one.
func testJournalProcess(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("journal process"), "")
	if err := s.JournalStart(ctx, task.ID, "c1", "bash", "h", `{"command":"sleep 9"}`); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{`{"group":1}`, `{"group":42}`} {
		if err := s.JournalProcess(ctx, task.ID, "c1", p); err != nil {
			t.Fatal(err)
		}
	}
	un, err := s.UnfinishedCalls(ctx, task.ID)
	if err != nil || len(un) != 1 || un[0].Process != `{"group":42}` || un[0].Result != "" {
		t.Fatalf("unfinished = %+v, %v; want the last process recorded and no result", un, err)
	}
	if err := s.JournalFinish(ctx, task.ID, "c1", "done", false); err != nil {
		t.Fatal(err)
	}
	all, _ := s.Journal(ctx, task.ID)
	if len(all) != 1 || all[0].Process != "" || all[0].Result != "done" {
		t.Errorf("finished entry = %+v; want its result and no process", all)
	}
	if err := s.JournalProcess(ctx, task.ID, "c1", `{"group":7}`); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("process of a finished call: %v, want ErrNotFound", err)
	}
}
