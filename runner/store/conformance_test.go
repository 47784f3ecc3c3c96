package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestConformance runs the same behaviour suite on SQLite and Postgres.
func TestConformance(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) { runConformance(t, open) })
	}
}

func runConformance(t *testing.T, open storetest.Opener) {
	t.Run("IntakeDedupe", func(t *testing.T) { testIntakeDedupe(t, open) })
	t.Run("IntakeAtomic", func(t *testing.T) { testIntakeAtomic(t, open) })
	t.Run("IntakeConcurrentDuplicates", func(t *testing.T) { testIntakeConcurrent(t, open) })
	t.Run("EventsConcurrent", func(t *testing.T) { testEventsConcurrent(t, open) })
	t.Run("ApprovalCAS", func(t *testing.T) { testApprovalCAS(t, open) })
	t.Run("ApprovalExpiry", func(t *testing.T) { testApprovalExpiry(t, open) })
	t.Run("ApprovalRefusals", func(t *testing.T) { testApprovalRefusals(t, open) })
	t.Run("Journal", func(t *testing.T) { testJournal(t, open) })
	t.Run("JournalProcess", func(t *testing.T) { testJournalProcess(t, open) })
	t.Run("Checkpointed", func(t *testing.T) { testCheckpointed(t, open) })
	t.Run("AppendFinishing", func(t *testing.T) { testAppendFinishing(t, open) })
	t.Run("WriteStep", func(t *testing.T) { testWriteStep(t, open) })
	t.Run("WriteStepCarried", func(t *testing.T) { testWriteStepCarried(t, open) })
	t.Run("StateCAS", func(t *testing.T) { testStateCAS(t, open) })
	t.Run("StateEvents", func(t *testing.T) { testStateEvents(t, open) })
	t.Run("ClaimWorkspaceOneAtATime", func(t *testing.T) { testClaimWorkspace(t, open, 1) })
	t.Run("ClaimWorkspaceThreeAtOnce", func(t *testing.T) { testClaimWorkspace(t, open, 3) })
	t.Run("Pagination", func(t *testing.T) { testPagination(t, open) })
	t.Run("Session", func(t *testing.T) { testSession(t, open) })
	t.Run("Validation", func(t *testing.T) { testValidation(t, open) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, open) })
	t.Run("WebSessions", func(t *testing.T) { testWebSessions(t, open) })
	t.Run("TaskSearch", func(t *testing.T) { testTaskSearch(t, open) })
	t.Run("BootstrapToken", func(t *testing.T) { testBootstrapToken(t, open) })
	t.Run("ScheduleFireOnce", func(t *testing.T) { testScheduleFireOnce(t, open) })
	t.Run("ScheduleStateChanges", func(t *testing.T) { testScheduleStateChanges(t, open) })
	t.Run("Chat", func(t *testing.T) { testChat(t, open) })
	t.Run("ChatClaim", func(t *testing.T) { testChatClaim(t, open) })
	t.Run("ChatPrune", func(t *testing.T) { testChatPrune(t, open) })
	t.Run("ChatReceipt", func(t *testing.T) { testChatReceipt(t, open) })
	t.Run("InboxOnce", func(t *testing.T) { testInboxOnce(t, open) })
	t.Run("Roles", func(t *testing.T) { testRoles(t, open) })
	t.Run("ChatLease", func(t *testing.T) { testChatLease(t, open) })
	t.Run("PublishOutbox", func(t *testing.T) { testPublishOutbox(t, open) })
}

func newTask(prompt string) store.NewTask {
	return store.NewTask{
		Source: store.SourceSlack, Requester: "slack:U1", Prompt: prompt, Goal: true, PlanFirst: true,
		BudgetUSD: 2.5, Workspace: "repo", Posture: "auto",
		Notify: []store.NotifyTarget{{Transport: "slack", Channel: "C1", Thread: "1700000000.000100"}},
	}
}

func mustCreate(t *testing.T, s *store.Store, nt store.NewTask, key string) store.Task {
	t.Helper()
	task, created, err := s.CreateTask(context.Background(), nt, key)
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	if !created {
		t.Fatalf("CreateTask(%q): created = false for a new key", key)
	}
	return task
}

func count(t *testing.T, s *store.Store, q string, args ...any) int {
	t.Helper()
	n, err := s.CountForTest(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("count %q: %v", q, err)
	}
	return n
}

func testIntakeDedupe(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("fix the flaky test"), "Ev1")
	if task.State != store.StateQueued || task.JobID == 0 || !task.Goal || !task.PlanFirst || task.Source != store.SourceSlack {
		t.Fatalf("created task = %+v", task)
	}
	if len(task.ID) != 28 || task.ID[:2] != "t_" {
		t.Errorf("task id %q: want t_ + 26 characters", task.ID)
	}
	if st, err := s.JobStateForTest(ctx, task.JobID); err != nil || st != "available" {
		t.Fatalf("job %d state = %q, %v; want available", task.JobID, st, err)
	}
	got, err := s.Task(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Prompt != "fix the flaky test" || !slices.Equal(got.Notify, task.Notify) || got.Requester != "slack:U1" || got.BudgetUSD != 2.5 {
		t.Errorf("Task() = %+v, want %+v", got, task)
	}

	dup, created, err := s.CreateTask(ctx, newTask("a retry of the same event"), "Ev1")
	if err != nil || created {
		t.Fatalf("duplicate: created=%v err=%v", created, err)
	}
	if dup.ID != task.ID || dup.Prompt != "fix the flaky test" {
		t.Errorf("duplicate returned %s %q, want the original %s", dup.ID, dup.Prompt, task.ID)
	}
	if n := count(t, s, "SELECT COUNT(*) FROM tasks"); n != 1 {
		t.Errorf("tasks = %d after a duplicate, want 1", n)
	}
	if n := count(t, s, "SELECT COUNT(*) FROM river_job"); n != 1 {
		t.Errorf("jobs = %d after a duplicate, want 1", n)
	}

	// The same key from another source is another event.
	other := newTask("from telegram")
	other.Source = store.SourceTelegram
	if o := mustCreate(t, s, other, "Ev1"); o.ID == task.ID {
		t.Error("same key from another source was deduplicated")
	}
	// No key, no dedupe.
	a := mustCreate(t, s, newTask("x"), "")
	b := mustCreate(t, s, newTask("x"), "")
	if a.ID == b.ID {
		t.Error("two keyless intakes share an id")
	}
	if _, err := s.Task(ctx, "t_missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Task(missing) err = %v, want ErrNotFound", err)
	}
}

func testIntakeAtomic(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	// Break the job insert: the task and the dedupe key must not survive it.
	if err := s.ExecForTest(ctx, "ALTER TABLE river_job RENAME TO river_job_gone"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateTask(ctx, newTask("doomed"), "Ev-atomic"); err == nil {
		t.Fatal("CreateTask succeeded without a job table")
	}
	if n := count(t, s, "SELECT COUNT(*) FROM tasks"); n != 0 {
		t.Errorf("tasks = %d after a failed job insert, want 0", n)
	}
	if n := count(t, s, "SELECT COUNT(*) FROM dedupe_keys"); n != 0 {
		t.Errorf("dedupe keys = %d after a failed job insert, want 0", n)
	}
	if err := s.ExecForTest(ctx, "ALTER TABLE river_job_gone RENAME TO river_job"); err != nil {
		t.Fatal(err)
	}
	// The key was not consumed: the retried delivery creates the task.
	task := mustCreate(t, s, newTask("second delivery"), "Ev-atomic")
	if n := count(t, s, "SELECT COUNT(*) FROM river_job WHERE id = ?", task.JobID); n != 1 {
		t.Errorf("job of the retried intake: %d rows, want 1", n)
	}
}

func testIntakeConcurrent(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	const n = 8
	ids := make([]string, n)
	createdN := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			task, created, err := s.CreateTask(ctx, newTask(fmt.Sprint("delivery ", i)), "Ev-race")
			if err != nil {
				t.Errorf("CreateTask: %v", err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids[i] = task.ID
			if created {
				createdN++
			}
		})
	}
	wg.Wait()
	if createdN != 1 {
		t.Errorf("%d concurrent deliveries created %d tasks, want 1", n, createdN)
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("deliveries returned different tasks: %v", ids)
		}
	}
	if c := count(t, s, "SELECT COUNT(*) FROM river_job"); c != 1 {
		t.Errorf("jobs = %d, want 1", c)
	}
}

func testEventsConcurrent(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("events"), "")
	const writers, each = 6, 20
	var wg sync.WaitGroup
	seqs := make([][]store.Event, writers) // what each writer was told
	for w := range writers {
		// Odd writers append in batches of up to three (AppendEvents):
		// a batch takes consecutive numbers, reported back in its order.
		batch := 1 + 2*(w%2)
		wg.Go(func() {
			for i := 0; i < each; i += batch {
				var in []store.EventInput
				for j := i; j < min(i+batch, each); j++ {
					p, _ := json.Marshal(map[string]int{"w": w, "i": j})
					in = append(in, store.EventInput{Type: "progress", Payload: p})
				}
				got, err := s.AppendEvents(ctx, task.ID, in...)
				if err != nil {
					t.Errorf("AppendEvents: %v", err)
					return
				}
				for k := range got {
					if got[k].Seq != got[0].Seq+int64(k) || string(got[k].Payload) != string(in[k].Payload) {
						t.Errorf("AppendEvents returned %+v for %s", got[k], in[k].Payload)
					}
				}
				seqs[w] = append(seqs[w], got...)
			}
		})
	}
	wg.Wait()
	evs, err := s.Events(ctx, task.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != writers*each {
		t.Fatalf("got %d events, want %d", len(evs), writers*each)
	}
	for _, told := range seqs {
		for _, e := range told {
			if stored := evs[e.Seq-1]; string(stored.Payload) != string(e.Payload) {
				t.Fatalf("event %d was reported as %s but stored as %s", e.Seq, e.Payload, stored.Payload)
			}
		}
	}
	last := map[int]int{}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: sequence has a gap or duplicate", i, ev.Seq)
		}
		var p map[string]int
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			t.Fatal(err)
		}
		// Each writer's own events keep their order.
		if prev, ok := last[p["w"]]; ok && p["i"] <= prev {
			t.Fatalf("writer %d: event %d after %d", p["w"], p["i"], prev)
		}
		last[p["w"]] = p["i"]
	}
	page, err := s.Events(ctx, task.ID, 100, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 5 || page[0].Seq != 101 || page[4].Seq != 105 {
		t.Errorf("Events(after 100, limit 5) = %d events from %d", len(page), page[0].Seq)
	}
	// EventsOfType picks one kind out of the whole log, in order.
	for i := range 3 {
		if _, err := s.AppendEvent(ctx, task.ID, "usage", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	usage, err := s.EventsOfType(ctx, task.ID, "usage")
	if err != nil {
		t.Fatal(err)
	}
	if len(usage) != 3 || usage[0].Seq != writers*each+1 || string(usage[2].Payload) != `{"i":2}` || usage[1].Type != "usage" {
		t.Errorf("EventsOfType(usage) = %+v", usage)
	}
	if none, err := s.EventsOfType(ctx, "t_missing", "usage"); err != nil || len(none) != 0 {
		t.Errorf("EventsOfType(missing task) = %v, %v", none, err)
	}
	if _, err := s.AppendEvents(ctx, "t_missing", store.EventInput{Type: "x"}, store.EventInput{Type: "y"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AppendEvents(missing task) = %v, want ErrNotFound", err)
	}
	if _, err := s.AppendEvents(ctx, task.ID, store.EventInput{Type: "x"}, store.EventInput{Type: "y", Payload: json.RawMessage("{bad")}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("AppendEvents(bad JSON) = %v, want ErrInvalid", err)
	}
	if _, err := s.AppendEvent(ctx, "t_missing", "x", nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AppendEvent(missing task) = %v, want ErrNotFound", err)
	}
	if _, err := s.AppendEvent(ctx, task.ID, "x", json.RawMessage("{bad")); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("AppendEvent(bad JSON) = %v, want ErrInvalid", err)
	}
}

func newApproval(taskID string, expires time.Time) store.NewApproval {
	return store.NewApproval{
		TaskID: taskID, Tool: "bash", Subject: "rm -rf build", CallHash: "h1", Preview: "rm -rf build",
		Requester: "slack:U1", Approvers: []string{"slack:U2", "slack:U3"}, ExpiresAt: expires,
	}
}

func testApprovalCAS(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	clk := newClock()
	s := open(t, store.Config{Now: clk.Now})
	task := mustCreate(t, s, newTask("approve me"), "")
	ap, err := s.CreateApproval(ctx, newApproval(task.ID, clk.Now().Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if ap.State != store.ApprovalPending || ap.ID == "" {
		t.Fatalf("created approval = %+v", ap)
	}
	deciders := []struct {
		who string
		d   store.Decision
	}{{"slack:U2", store.AllowOnce}, {"slack:U3", store.Deny}}
	var wg sync.WaitGroup
	errs := make([]error, len(deciders))
	wins := make([]store.Approval, len(deciders))
	for i, dc := range deciders {
		wg.Go(func() { wins[i], errs[i] = s.DecideApproval(ctx, ap.ID, dc.d, dc.who, "h1") })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatal("both deciders won")
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatalf("nobody won: %v", errs)
	}
	loser := 1 - winner
	var de *store.ApprovalDecidedError
	if !errors.As(errs[loser], &de) || !errors.Is(errs[loser], store.ErrAlreadyDecided) {
		t.Fatalf("loser err = %v, want *ApprovalDecidedError", errs[loser])
	}
	if de.Approval.DecidedBy != deciders[winner].who || de.Approval.Decision != deciders[winner].d {
		t.Errorf("loser sees decision %s by %s, want %s by %s", de.Approval.Decision, de.Approval.DecidedBy,
			deciders[winner].d, deciders[winner].who)
	}
	got, err := s.Approval(ctx, ap.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantState := map[store.Decision]store.ApprovalState{store.AllowOnce: store.ApprovalAllowed, store.Deny: store.ApprovalDenied}[deciders[winner].d]
	if got.State != wantState || got.DecidedAt.IsZero() || !sameApproval(got, wins[winner]) {
		t.Errorf("stored approval = %+v", got)
	}
	audit, err := s.ApprovalAudit(ctx, ap.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 2 || audit[0].Action != "requested" || audit[1].Action != string(deciders[winner].d) || audit[1].Actor != deciders[winner].who {
		t.Errorf("audit = %+v, want requested then the winner's decision only", audit)
	}
	if pend, err := s.PendingApprovals(ctx, ""); err != nil || len(pend) != 0 {
		t.Errorf("PendingApprovals after decision = %v, %v", pend, err)
	}
}

func sameApproval(a, b store.Approval) bool {
	return a.ID == b.ID && a.State == b.State && a.Decision == b.Decision && a.DecidedBy == b.DecidedBy &&
		a.DecidedAt.Equal(b.DecidedAt) && slices.Equal(a.Approvers, b.Approvers)
}

func testApprovalExpiry(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	clk := newClock()
	s := open(t, store.Config{Now: clk.Now})
	task := mustCreate(t, s, newTask("expire"), "")
	late, err := s.CreateApproval(ctx, newApproval(task.ID, clk.Now().Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := s.CreateApproval(ctx, newApproval(task.ID, clk.Now().Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if pend, _ := s.PendingApprovals(ctx, task.ID); len(pend) != 2 {
		t.Fatalf("pending = %d, want 2", len(pend))
	}
	clk.Advance(2 * time.Minute)
	if _, err := s.DecideApproval(ctx, late.ID, store.AllowOnce, "slack:U2", ""); !errors.Is(err, store.ErrExpired) {
		t.Fatalf("deciding after the deadline: err = %v, want ErrExpired", err)
	}
	expired, err := s.ExpireApprovals(ctx, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(expired) != 1 || expired[0].ID != late.ID || expired[0].State != store.ApprovalExpired {
		t.Fatalf("ExpireApprovals = %+v, want only %s", expired, late.ID)
	}
	if again, err := s.ExpireApprovals(ctx, clk.Now()); err != nil || len(again) != 0 {
		t.Errorf("second sweep = %v, %v; want nothing", again, err)
	}
	if _, err := s.DecideApproval(ctx, late.ID, store.AllowOnce, "slack:U2", ""); !errors.Is(err, store.ErrAlreadyDecided) {
		t.Errorf("deciding an expired approval: err = %v, want ErrAlreadyDecided", err)
	}
	audit, _ := s.ApprovalAudit(ctx, late.ID)
	if len(audit) != 2 || audit[1].Action != "expired" {
		t.Errorf("audit = %+v, want requested, expired", audit)
	}
	if got, _ := s.Approval(ctx, fresh.ID); got.State != store.ApprovalPending {
		t.Errorf("fresh approval state = %s, want pending", got.State)
	}
	if _, err := s.CreateApproval(ctx, newApproval(task.ID, clk.Now().Add(-time.Second))); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("approval with a past deadline: %v, want ErrInvalid", err)
	}
}

func testApprovalRefusals(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("refusals"), "")
	ap, err := s.CreateApproval(ctx, newApproval(task.ID, time.Now().Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		id, who string
		hash    string
		d       store.Decision
		want    error
	}{
		{"unknown approval", "a_missing", "slack:U2", "h1", store.AllowOnce, store.ErrNotFound},
		{"not an approver", ap.ID, "slack:U1", "h1", store.AllowOnce, store.ErrNotApprover},
		{"other call", ap.ID, "slack:U2", "h2", store.AllowOnce, store.ErrCallMismatch},
		{"bad decision", ap.ID, "slack:U2", "h1", "maybe", store.ErrInvalid},
	}
	for _, c := range cases {
		if _, err := s.DecideApproval(ctx, c.id, c.d, c.who, c.hash); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if audit, _ := s.ApprovalAudit(ctx, ap.ID); len(audit) != 1 {
		t.Errorf("refused decisions wrote audit rows: %+v", audit)
	}
	got, err := s.DecideApproval(ctx, ap.ID, store.AllowTask, "slack:U3", "h1")
	if err != nil || got.State != store.ApprovalAllowed || got.Decision != store.AllowTask {
		t.Errorf("valid decision after refusals = %+v, %v", got, err)
	}
}

func testJournal(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("journal"), "")
	for _, id := range []string{"c1", "c2", "c3"} {
		if err := s.JournalStart(ctx, task.ID, id, "write_file", "hash-"+id, `{"path":"a"}`); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.JournalStart(ctx, task.ID, "c1", "write_file", "hash-c1", `{}`); !errors.Is(err, store.ErrAlreadyStarted) {
		t.Errorf("second start: %v, want ErrAlreadyStarted", err)
	}
	if err := s.JournalFinish(ctx, task.ID, "c2", "ok", false); err != nil {
		t.Fatal(err)
	}
	if err := s.JournalFinish(ctx, task.ID, "c2", "again", true); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second finish: %v, want ErrNotFound", err)
	}
	un, err := s.UnfinishedCalls(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range un {
		ids = append(ids, e.CallID)
		if !e.FinishedAt.IsZero() || e.Tool != "write_file" || e.Args != `{"path":"a"}` {
			t.Errorf("unfinished entry = %+v", e)
		}
	}
	if !slices.Equal(ids, []string{"c1", "c3"}) {
		t.Errorf("unfinished = %v, want [c1 c3]", ids)
	}
	all, _ := s.Journal(ctx, task.ID)
	if len(all) != 3 || all[1].Result != "ok" || all[1].FinishedAt.IsZero() || all[1].IsError {
		t.Errorf("journal = %+v", all)
	}
}

func testStateCAS(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("cas"), "")
	const n = 6
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range n {
		wg.Go(func() {
			owner := fmt.Sprint("node-", i)
			_, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateQueued}, store.StateRunning,
				&store.StateOpts{LeaseOwner: &owner})
			var se *store.StateError
			switch {
			case err == nil:
				mu.Lock()
				wins++
				mu.Unlock()
			case errors.As(err, &se) && se.Current == store.StateRunning && errors.Is(err, store.ErrStateConflict):
			default:
				t.Errorf("SetTaskState: %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d goroutines won queued→running, want 1", wins)
	}
	got, _ := s.Task(ctx, task.ID)
	if got.State != store.StateRunning || got.Attempt != 1 || got.StartedAt.IsZero() || got.LeaseOwner == "" || !got.FinishedAt.IsZero() {
		t.Fatalf("after start: %+v", got)
	}
	res := &store.Result{Summary: "done", Tokens: agent.Usage{Prompt: 10, Completion: 5, Cached: 2}, Cost: 0.25, DurationMS: 1234,
		UnpricedTokens: 7, Models: map[string]store.ModelCost{
			"p/a": {Calls: 2, Tokens: agent.Usage{Prompt: 10, Completion: 5, Cached: 2}, Cost: 0.25, Priced: true},
			"p/b": {Calls: 1, Tokens: agent.Usage{Prompt: 6, Completion: 1}},
		}}
	done, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateRunning, store.StateWaitingApproval}, store.StateSucceeded,
		&store.StateOpts{Result: res})
	if err != nil {
		t.Fatal(err)
	}
	if done.FinishedAt.IsZero() || done.Result == nil || !reflect.DeepEqual(*done.Result, *res) || done.LeaseOwner != got.LeaseOwner {
		t.Errorf("finished task = %+v (result %+v)", done, done.Result)
	}
	if _, err := s.SetTaskState(ctx, "t_missing", []store.State{store.StateQueued}, store.StateRunning, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing task: %v", err)
	}
	if _, err := s.SetTaskState(ctx, task.ID, []store.State{store.StateRunning}, "bogus", nil); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("bogus state: %v", err)
	}
}

func testPagination(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	var all []string
	for i := range 7 {
		nt := newTask(fmt.Sprint("task ", i))
		if i%2 == 1 {
			nt.Source = store.SourceCron
		}
		all = append(all, mustCreate(t, s, nt, "").ID)
	}
	if _, err := s.SetTaskState(ctx, all[0], []store.State{store.StateQueued}, store.StateCancelled, nil); err != nil {
		t.Fatal(err)
	}
	var seen []string
	cursor := ""
	pages := 0
	for {
		page, err := s.ListTasks(ctx, store.TaskFilter{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, task := range page.Tasks {
			seen = append(seen, task.ID)
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if pages != 3 || len(seen) != 7 {
		t.Fatalf("paged %d tasks in %d pages, want 7 in 3", len(seen), pages)
	}
	if !slices.IsSortedFunc(seen, func(a, b string) int { return -compareStr(a, b) }) {
		t.Errorf("listing is not newest first: %v", seen)
	}
	slices.Sort(seen)
	want := slices.Clone(all)
	slices.Sort(want)
	if !slices.Equal(seen, want) {
		t.Errorf("paged ids %v, want %v", seen, want)
	}
	cron, _ := s.ListTasks(ctx, store.TaskFilter{Source: store.SourceCron})
	if len(cron.Tasks) != 3 {
		t.Errorf("cron tasks = %d, want 3", len(cron.Tasks))
	}
	cancelled, _ := s.ListTasks(ctx, store.TaskFilter{States: []store.State{store.StateCancelled, store.StateFailed}})
	if len(cancelled.Tasks) != 1 || cancelled.Tasks[0].ID != all[0] {
		t.Errorf("cancelled = %+v", cancelled.Tasks)
	}
}

func compareStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func testSession(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	task := mustCreate(t, s, newTask("session"), "")
	msgs := []agent.Message{
		{Role: agent.RoleSystem, Content: "you are"},
		{Role: agent.RoleUser, Content: "fix it"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}}},
	}
	if n, err := s.AppendMessages(ctx, task.ID, msgs[:2]...); err != nil || n != 2 {
		t.Fatalf("AppendMessages = %d, %v", n, err)
	}
	if n, err := s.AppendMessages(ctx, task.ID, msgs[2]); err != nil || n != 3 {
		t.Fatalf("AppendMessages = %d, %v", n, err)
	}
	got, err := s.Messages(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[1].Content != "fix it" || got[2].ToolCalls[0].Arguments != `{"command":"ls"}` {
		t.Errorf("Messages = %+v", got)
	}
	if gs, err := s.GoalState(ctx, task.ID); err != nil || gs != nil {
		t.Errorf("GoalState before save = %s, %v", gs, err)
	}
	if err := s.SaveGoalState(ctx, task.ID, json.RawMessage(`{"turn":3}`)); err != nil {
		t.Fatal(err)
	}
	if gs, err := s.GoalState(ctx, task.ID); err != nil || string(gs) != `{"turn":3}` {
		t.Errorf("GoalState = %s, %v", gs, err)
	}
	if err := s.SaveGoalState(ctx, "t_missing", json.RawMessage(`{}`)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SaveGoalState(missing) = %v", err)
	}
}

func testValidation(t *testing.T, open storetest.Opener) {
	ctx := context.Background()
	s := open(t, store.Config{})
	bad := []store.NewTask{
		{Source: "email", Prompt: "x"},
		{Source: store.SourceAPI, Prompt: "  "},
	}
	for _, nt := range bad {
		if _, _, err := s.CreateTask(ctx, nt, "k"); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("CreateTask(%+v) = %v, want ErrInvalid", nt, err)
		}
	}
	if n := count(t, s, "SELECT COUNT(*) FROM tasks"); n != 0 {
		t.Errorf("invalid intakes wrote %d tasks", n)
	}
}
