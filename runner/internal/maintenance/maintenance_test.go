package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"reasonix/runner/store"
)

// leader is a Leads whose answer a test sets, counting the questions.
type leader struct {
	yes  atomic.Bool
	asks atomic.Int64
}

func (l *leader) leads(context.Context) bool { l.asks.Add(1); return l.yes.Load() }

type fakeApprovals struct {
	mu      sync.Mutex
	pending []store.Approval
	calls   int // ExpireApprovals
	looks   int // NextApprovalDeadline
	woken   []string
	expired map[string]time.Time // approval id → when it was expired
	added   chan struct{}
}

func (f *fakeApprovals) ExpireApprovals(_ context.Context, now time.Time) ([]store.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	var out, left []store.Approval
	for _, a := range f.pending {
		if a.ExpiresAt.After(now) {
			left = append(left, a)
			continue
		}
		out = append(out, a)
		if f.expired == nil {
			f.expired = map[string]time.Time{}
		}
		f.expired[a.ID] = now
	}
	f.pending = left
	return out, nil
}

func (f *fakeApprovals) NextApprovalDeadline(context.Context) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.looks++
	var next time.Time
	for _, a := range f.pending {
		if next.IsZero() || a.ExpiresAt.Before(next) {
			next = a.ExpiresAt
		}
	}
	return next, nil
}

func (f *fakeApprovals) ApprovalDeadlines() (<-chan struct{}, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.added == nil {
		f.added = make(chan struct{}, 1)
	}
	return f.added, func() {}
}

func (f *fakeApprovals) Wake(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.woken = append(f.woken, id)
	return nil
}

// add stores a pending approval as CreateApproval would, signalling it.
func (f *fakeApprovals) add(a store.Approval) {
	f.mu.Lock()
	f.pending = append(f.pending, a)
	ch := f.added
	f.mu.Unlock()
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (f *fakeApprovals) stats() (looks, calls int, expired map[string]time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.looks, f.calls, maps.Clone(f.expired)
}

// TestApprovalExpirerRunsOnTheLeaderOnly: a follower's passes touch
// nothing; the leader's expire, report each approval, then wake its task.
func TestApprovalExpirerRunsOnTheLeaderOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		due := time.Now().Add(time.Second)
		st := &fakeApprovals{pending: []store.Approval{{ID: "a1", TaskID: "t1", ExpiresAt: due}, {ID: "a2", TaskID: "t2", ExpiresAt: due}}}
		var l leader
		var reported []string
		e := NewApprovalExpirer(st, ApprovalExpirerConfig{Interval: 2 * time.Second, Leads: l.leads,
			Expired: func(_ context.Context, a store.Approval) { reported = append(reported, a.ID) }})
		e.Start(t.Context())
		defer e.Stop()

		time.Sleep(5 * time.Second) // fake time: two passes as a follower
		synctest.Wait()
		if looks, calls, _ := st.stats(); l.asks.Load() != 2 || looks != 0 || calls != 0 || e.Passes() != 0 {
			t.Fatalf("follower: asked %d, looks %d, store calls %d, passes %d; want 2, 0, 0, 0", l.asks.Load(), looks, calls, e.Passes())
		}
		l.yes.Store(true)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if _, calls, _ := st.stats(); calls != 1 {
			t.Fatalf("leader: store calls %d; want 1", calls)
		}
		if len(reported) != 2 || reported[0] != "a1" || reported[1] != "a2" || len(st.woken) != 2 || st.woken[0] != "t1" || st.woken[1] != "t2" {
			t.Fatalf("reported %v, woken %v", reported, st.woken)
		}
	})
}

// TestApprovalExpirerWaitsForTheNextDeadline: with nothing pending the
// leader only looks once per Interval and never sweeps; an approval due
// before the next look expires at its deadline, woken by its creation on
// this node; one stored elsewhere (no signal) is found by the fallback
// look and expires at its deadline too.
func TestApprovalExpirerWaitsForTheNextDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &fakeApprovals{}
		var l leader
		l.yes.Store(true)
		e := NewApprovalExpirer(st, ApprovalExpirerConfig{Interval: 30 * time.Second, Leads: l.leads})
		start := time.Now()
		e.Start(t.Context())
		defer e.Stop()

		time.Sleep(10*time.Minute + time.Second) // idle: 20 looks, no sweep
		synctest.Wait()
		if looks, calls, _ := st.stats(); looks != 20 || calls != 0 {
			t.Fatalf("idle for 10 min: %d looks, %d sweeps; want 20, 0", looks, calls)
		}

		// Stored here, due in 5 s, between two looks 30 s apart.
		soon := time.Now().Add(5 * time.Second)
		st.add(store.Approval{ID: "here", TaskID: "t1", ExpiresAt: soon})
		time.Sleep(6 * time.Second)
		synctest.Wait()
		_, calls, expired := st.stats()
		if !expired["here"].Equal(soon) || calls != 1 {
			t.Fatalf("approval due at +%s: expired at +%s after %d sweeps; want at its deadline, 1 sweep",
				soon.Sub(start), expired["here"].Sub(start), calls)
		}

		// Stored by another node (no signal), due in 50 s: the next look
		// (at most 30 s away) finds it and waits for its deadline.
		later := time.Now().Add(50 * time.Second)
		st.mu.Lock()
		st.pending = append(st.pending, store.Approval{ID: "there", TaskID: "t2", ExpiresAt: later})
		st.mu.Unlock()
		time.Sleep(51 * time.Second)
		synctest.Wait()
		_, calls, expired = st.stats()
		if !expired["there"].Equal(later) || calls != 2 {
			t.Fatalf("approval from elsewhere due at +%s: expired at +%s after %d sweeps; want at its deadline, 2 sweeps",
				later.Sub(start), expired["there"].Sub(start), calls)
		}
		if len(st.woken) != 2 || st.woken[0] != "t1" || st.woken[1] != "t2" {
			t.Fatalf("woken %v; want [t1 t2]", st.woken)
		}
	})
}

type fakeChatEvents struct {
	mu      sync.Mutex
	cutoffs []time.Time
}

func (f *fakeChatEvents) PruneChatEvents(_ context.Context, before time.Time) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cutoffs = append(f.cutoffs, before)
	return 1, nil
}

func (f *fakeChatEvents) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.cutoffs)
}

// TestChatEventPrunerPrunesHourlyAndAsksOnlyWhenDue: the first look while
// leading prunes what is older than the retention; the looks of the next
// hour ask no one anything, and the first one after it prunes again.
func TestChatEventPrunerPrunesHourlyAndAsksOnlyWhenDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &fakeChatEvents{}
		var l leader
		l.yes.Store(true)
		p := NewChatEventPruner(st, ChatEventPrunerConfig{Interval: 2 * time.Second, Leads: l.leads})
		start := time.Now()
		p.Start(t.Context())
		defer p.Stop()

		time.Sleep(3 * time.Second)
		synctest.Wait()
		if st.count() != 1 || l.asks.Load() != 1 {
			t.Fatalf("after the first look: %d prunes, %d leader questions; want 1, 1", st.count(), l.asks.Load())
		}
		if want := start.Add(2*time.Second - ChatEventRetention); !st.cutoffs[0].Equal(want) {
			t.Fatalf("cutoff %v, want %v", st.cutoffs[0], want)
		}
		time.Sleep(ChatEventPruneEvery - 4*time.Second)
		synctest.Wait()
		if st.count() != 1 || l.asks.Load() != 1 {
			t.Fatalf("within the hour: %d prunes, %d leader questions; want 1, 1", st.count(), l.asks.Load())
		}
		time.Sleep(4 * time.Second)
		synctest.Wait()
		if st.count() != 2 || l.asks.Load() != 2 {
			t.Fatalf("after the hour: %d prunes, %d leader questions; want 2, 2", st.count(), l.asks.Load())
		}
	})
}

// TestChatEventPrunerWaitsForLeadership: a follower does not prune and
// asks who leads once a minute, not every look; once elected, it prunes
// at its next question.
func TestChatEventPrunerWaitsForLeadership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &fakeChatEvents{}
		var l leader
		p := NewChatEventPruner(st, ChatEventPrunerConfig{Interval: time.Second, Leads: l.leads})
		p.Start(t.Context())
		defer p.Stop()
		time.Sleep(90 * time.Second) // fake time: 90 looks, questions at 1 s and 61 s
		synctest.Wait()
		if st.count() != 0 || l.asks.Load() != 2 {
			t.Fatalf("a follower: %d prunes, %d leader questions in 90 looks; want 0, 2", st.count(), l.asks.Load())
		}
		l.yes.Store(true)
		time.Sleep(32 * time.Second) // the next question is at 121 s
		synctest.Wait()
		if st.count() != 1 || l.asks.Load() != 3 {
			t.Fatalf("elected: %d prunes, %d leader questions; want 1, 3", st.count(), l.asks.Load())
		}
	})
}

// TestStaleReclaimerTakesOverDeadTasksEveryEvery: the first scan comes
// Every after the reclaimer is built, then one per Every; only the tasks
// Dead picks are taken over, and a failed take-over does not stop the
// others.
func TestStaleReclaimerTakesOverDeadTasksEveryEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var scans atomic.Int64
		var mu sync.Mutex
		var taken []string
		r := NewStaleReclaimer(StaleReclaimerConfig{Interval: time.Second, Every: 15 * time.Second,
			Running: func(context.Context) ([]store.RunningTask, error) {
				scans.Add(1)
				return []store.RunningTask{{ID: "alive"}, {ID: "dead1"}, {ID: "dead2"}}, nil
			},
			Dead: func(t store.RunningTask) bool { return t.ID != "alive" },
			TakeOver: func(_ context.Context, t store.RunningTask) error {
				mu.Lock()
				defer mu.Unlock()
				taken = append(taken, t.ID)
				if t.ID == "dead1" {
					return errors.New("lost a race")
				}
				return nil
			}})
		r.Start(t.Context())
		defer r.Stop()
		time.Sleep(14500 * time.Millisecond)
		synctest.Wait()
		if scans.Load() != 0 {
			t.Fatalf("%d scans before Every", scans.Load())
		}
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		got := append([]string(nil), taken...)
		mu.Unlock()
		if scans.Load() != 1 || len(got) != 2 || got[0] != "dead1" || got[1] != "dead2" {
			t.Fatalf("after Every: %d scans, taken over %v; want 1, [dead1 dead2]", scans.Load(), got)
		}
		time.Sleep(15 * time.Second)
		synctest.Wait()
		if scans.Load() != 2 {
			t.Fatalf("after 2×Every: %d scans, want 2", scans.Load())
		}
	})
}

// TestScheduleTickerTicksOnTheLeaderOnly: a follower never ticks; the
// leader ticks once per interval, and a failing tick does not stop it.
func TestScheduleTickerTicksOnTheLeaderOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l leader
		var ticks atomic.Int64
		s := NewScheduleTicker(ScheduleTickerConfig{Interval: time.Second, Leads: l.leads,
			Tick: func(context.Context) error { ticks.Add(1); return errors.New("schedule x: store down") }})
		s.Start(t.Context())
		defer s.Stop()
		time.Sleep(3500 * time.Millisecond)
		synctest.Wait()
		if ticks.Load() != 0 || l.asks.Load() != 3 {
			t.Fatalf("follower: %d ticks, %d questions; want 0, 3", ticks.Load(), l.asks.Load())
		}
		l.yes.Store(true)
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if ticks.Load() != 3 {
			t.Fatalf("leader: %d ticks, want 3", ticks.Load())
		}
	})
}

// TestStopWaitsForThePassAndIsIdempotent: Stop cancels the pass's context
// and returns only once the pass has; a second Stop, and a Stop of a loop
// never started, return at once; after Stop nothing runs.
func TestStopWaitsForThePassAndIsIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		new(ScheduleTicker).Stop()
		entered, leave := make(chan struct{}), make(chan struct{})
		var ended atomic.Bool
		var ticks atomic.Int64
		s := NewScheduleTicker(ScheduleTickerConfig{Interval: time.Second, Leads: func(context.Context) bool { return true },
			Tick: func(ctx context.Context) error {
				if ticks.Add(1) == 1 {
					close(entered)
					<-ctx.Done()
					<-leave
					ended.Store(true)
				}
				return nil
			}})
		s.Start(t.Context())
		<-entered
		stopped := make(chan struct{})
		go func() { s.Stop(); close(stopped) }()
		synctest.Wait()
		select {
		case <-stopped:
			t.Fatal("Stop returned while the pass was running")
		default:
		}
		close(leave)
		<-stopped
		if !ended.Load() {
			t.Fatal("Stop returned before the pass")
		}
		s.Stop()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if ticks.Load() != 1 {
			t.Fatalf("%d ticks after Stop, want 1", ticks.Load())
		}
	})
}

// TestPublishRetrierDrivesDueRecordsAtOnceAndThenEveryInterval: the first
// pass runs as the node starts (it finishes what it left before a crash),
// then one each interval; every due task is driven, and one whose record
// another node holds (ErrPublishBusy) is not a failure worth a warning.
func TestPublishRetrierDrivesDueRecordsAtOnceAndThenEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var driven []string
		var logs strings.Builder
		r := NewPublishRetrier(PublishRetrierConfig{Interval: 30 * time.Second,
			Due: func(context.Context, int) ([]string, error) { return []string{"t1", "t2"}, nil },
			Drive: func(_ context.Context, id string) error {
				mu.Lock()
				defer mu.Unlock()
				driven = append(driven, id)
				if id == "t2" {
					return fmt.Errorf("publish t2: %w", store.ErrPublishBusy)
				}
				return nil
			},
			Log: slog.New(slog.NewTextHandler(&logs, nil))})
		r.Start(t.Context())
		defer r.Stop()
		synctest.Wait()
		mu.Lock()
		if got := strings.Join(driven, ","); got != "t1,t2" {
			t.Fatalf("at start: driven %s, want t1,t2", got)
		}
		mu.Unlock()
		time.Sleep(30 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(driven) != 4 || logs.Len() != 0 {
			t.Fatalf("after one interval: driven %v, logged %q", driven, logs.String())
		}
	})
}
