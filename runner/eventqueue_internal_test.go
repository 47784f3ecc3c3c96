package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/internal/redact"
	"reasonix/runner/internal/cluster"
	"reasonix/runner/internal/taskrun"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// queueService is the part of a Service an eventQueue uses, on a real
// store with one task.
func queueService(t *testing.T, open storetest.Opener) (*Service, string) {
	t.Helper()
	st := open(t, store.Config{})
	task, _, err := st.CreateTask(context.Background(), store.NewTask{Source: store.SourceAPI, Prompt: "p", Posture: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{st: st, log: slog.New(slog.DiscardHandler), now: time.Now, hub: cluster.NewHub(), runs: map[string]*taskrun.Run{},
		redact: redact.New("sekrit-value-123")}
	return s, task.ID
}

// The log reads as the run happened: queued step events and events written
// directly for the same task (a state change, an approval) interleave in
// the order they were emitted, with no gap, and the queued ones carry the
// time they were queued, not written. Masking applies to queued events.
func TestEventQueueKeepsOrder(t *testing.T) {
	eachStore(t, func(t *testing.T, open storetest.Opener) {
		s, id := queueService(t, open)
		r := s.newRun(store.Task{ID: id}, nil, newEventQueue(s, id))
		s.addRun(r)
		signal, unsubscribe := s.hub.Subscribe(id)
		defer unsubscribe()

		var want []string
		var queuedAt []time.Time
		for i := range 200 {
			name := fmt.Sprintf("e%d", i)
			if i%25 == 24 {
				s.emitLogged(context.Background(), id, "direct", map[string]string{"n": name})
			} else {
				queuedAt = append(queuedAt, time.Now())
				r.Emit("queued", map[string]string{"n": name, "secret": "sekrit-value-123"})
			}
			want = append(want, name)
		}
		r.CloseEvents()
		s.removeRun(r)
		r.Emit("queued", map[string]string{"n": "after-close"}) // written directly
		want = append(want, "after-close")

		evs, err := s.st.Events(context.Background(), id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != len(want) {
			t.Fatalf("%d events stored, want %d", len(evs), len(want))
		}
		q := 0
		for i, e := range evs {
			var p map[string]string
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			if e.Seq != int64(i+1) || p["n"] != want[i] {
				t.Fatalf("event %d = seq %d %s, want seq %d %s", i, e.Seq, p["n"], i+1, want[i])
			}
			if strings.Contains(string(e.Payload), "sekrit") {
				t.Fatalf("event %d holds the secret: %s", i, e.Payload)
			}
			if e.Type == "queued" && q < len(queuedAt) {
				if d := e.Time.Sub(queuedAt[q]); d < -time.Millisecond || d > 50*time.Millisecond {
					t.Errorf("event %d stamped %s after it was queued", i, d)
				}
				q++
			}
		}
		select {
		case <-signal:
		default:
			t.Error("subscribers were not told the log grew")
		}
	})
}

// flush returns only once what was queued before it is stored, while other
// goroutines keep queueing.
func TestEventQueueFlush(t *testing.T) {
	eachStore(t, func(t *testing.T, open storetest.Opener) {
		s, id := queueService(t, open)
		q := newEventQueue(s, id)
		defer q.Close()
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := range 50 {
					q.Add("noise", map[string]int{"w": w, "i": i})
				}
			})
		}
		for i := range 20 {
			q.Add("mark", map[string]int{"i": i})
			q.Flush()
			evs, err := s.st.Events(context.Background(), id, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			marks := 0
			for _, e := range evs {
				if e.Type == "mark" {
					marks++
				}
			}
			if marks != i+1 {
				t.Fatalf("after flush %d: %d marks stored", i, marks)
			}
		}
		wg.Wait()
	})
}

func eachStore(t *testing.T, f func(*testing.T, storetest.Opener)) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) { f(t, open) })
	}
}
