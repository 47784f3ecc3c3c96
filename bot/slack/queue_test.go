package slack

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/internal/eventually"
)

// gated records each delivery and then holds its worker until open is
// closed, as a handler stuck on a slow store would.
type gated struct {
	open chan struct{}

	mu   sync.Mutex
	seen map[string]int // event id -> times handled
}

func newGated() *gated { return &gated{open: make(chan struct{}), seen: map[string]int{}} }

func (g *gated) HandleMessage(ctx context.Context, in bot.Inbound) {
	g.mu.Lock()
	g.seen[in.EventID]++
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-ctx.Done():
	}
}

func (g *gated) HandleClick(ctx context.Context, c bot.Click) string {
	g.HandleMessage(ctx, bot.Inbound{EventID: "click:" + c.MessageID})
	return ""
}

func (g *gated) times(id string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[id]
}

// startSocket starts a Socket Mode transport with one worker and a queue
// of one, so two deliveries occupy it.
func startSocket(t *testing.T, fake *bottest.Slack, h bot.Handler, wait time.Duration) (*Transport, *refusals) {
	t.Helper()
	return startSocketWith(t, fake, h, Config{Workers: 1, QueueSize: 1, QueueWait: wait})
}

// startSocketWith starts a Socket Mode transport configured as cfg (its
// tokens, API and logger filled in) on fake.
func startSocketWith(t *testing.T, fake *bottest.Slack, h bot.Handler, cfg Config) (*Transport, *refusals) {
	t.Helper()
	log := &refusals{}
	cfg.BotToken, cfg.AppToken, cfg.APIURL, cfg.Logger = "xoxb-1", "xapp-1", fake.APIURL(), slog.New(log)
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tr.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	eventually.True(t, 5*time.Second, func() bool { open, _ := fake.Connected(); return open == 1 }, "the socket to connect")
	return tr, log
}

// refusals records the envelopes the transport left unacknowledged, from
// its log.
type refusals struct {
	mu   sync.Mutex
	ids  []string
	msgs []string // every message logged
}

func (r *refusals) Enabled(context.Context, slog.Level) bool { return true }
func (r *refusals) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *refusals) WithGroup(string) slog.Handler            { return r }
func (r *refusals) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, rec.Message)
	r.mu.Unlock()
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "envelope" && strings.Contains(rec.Message, "unacknowledged") {
			r.mu.Lock()
			r.ids = append(r.ids, a.Value.String())
			r.mu.Unlock()
		}
		return true
	})
	return nil
}

// logged reports whether a message containing substr was logged.
func (r *refusals) logged(substr string) bool { return r.count(substr) > 0 }

// count counts the messages logged that contain substr.
func (r *refusals) count(substr string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.msgs {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

func (r *refusals) refused(envelope string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.ids, envelope)
}

// fill occupies the only worker and the only queue slot.
func fill(t *testing.T, fake *bottest.Slack, tr *Transport, g *gated) (busy, queued bottest.Event) {
	t.Helper()
	busy = fake.DM("U1", "D1", "one")
	eventually.True(t, 5*time.Second, func() bool { return g.times(busy.ID) == 1 }, "the worker to take the first")
	queued = fake.DM("U1", "D2", "two")
	eventually.True(t, 5*time.Second, func() bool { return len(tr.work) == 1 }, "the second to be queued")
	// A handler that keeps no receipts: queued is what acknowledges it.
	eventually.True(t, 5*time.Second, func() bool { _, acked := fake.Envelopes(queued.ID); return acked == 1 }, "the second to be acknowledged")
	return busy, queued
}

// An event that arrives while the queue stays full is not acknowledged;
// Slack redelivers it, and a redelivery that finds room is taken. Nothing
// acknowledged is dropped, and nothing is handled twice.
func TestFullQueueLeavesAnEventForSlackToRedeliver(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	// Slack's own delays are 3 s, 1 min and 5 min; shortened here.
	fake.RetryUnacked(300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond)
	g := newGated()
	tr, log := startSocket(t, fake, g, 50*time.Millisecond)
	busy, queued := fill(t, fake, tr, g)

	third := fake.DM("U1", "D3", "three")
	eventually.True(t, 5*time.Second, func() bool { sent, _ := fake.Envelopes(third.ID); return sent >= 2 }, "Slack to redeliver the unacknowledged event")
	if _, acked := fake.Envelopes(third.ID); acked != 0 || g.times(third.ID) != 0 {
		t.Fatalf("the full queue took the event: %d acks, handled %d times", acked, g.times(third.ID))
	}
	// A click finds the queue full too: unacknowledged, so Slack tells the
	// clicker it failed rather than the click vanishing.
	click := fake.Click("U2", "D1", "1.5", "ap:a_1:o")
	eventually.True(t, 5*time.Second, func() bool { return log.refused(click) }, "the click to be refused")
	if !slices.Contains(fake.Unacked(), click) {
		t.Error("the refused click was acknowledged")
	}

	close(g.open)
	eventually.True(t, 5*time.Second, func() bool { return g.times(third.ID) == 1 }, "a redelivery of the third to be handled")
	eventually.True(t, 5*time.Second, func() bool { _, acked := fake.Envelopes(third.ID); return acked > 0 }, "its acknowledgement")
	// Several envelopes may be acknowledged: a redelivery arriving while
	// the third is handled waits for that handling and is acknowledged
	// with it. What matters is that Slack stops sending it: every
	// redelivery it scheduled finds its envelope acknowledged, well before
	// the retries run out.
	eventually.True(t, 5*time.Second, func() bool { return fake.PendingRetries() == 0 }, "Slack's redeliveries to end")
	if sent, _ := fake.Envelopes(third.ID); sent >= 6 {
		t.Errorf("Slack redelivered the third event until its retries ran out: %d envelopes", sent)
	}
	for _, e := range []bottest.Event{busy, queued, third} {
		if sent, acked := fake.Envelopes(e.ID); acked == 0 {
			t.Errorf("event %s: none of %d envelopes acknowledged", e.ID, sent)
		}
	}
	for _, e := range []bottest.Event{busy, queued, third} {
		if n := g.times(e.ID); n != 1 {
			t.Errorf("event %s handled %d times, want once", e.ID, n)
		}
	}
	if n := g.times("click:1.5"); n != 0 {
		t.Errorf("the unacknowledged click was handled %d times", n)
	}
}

// When a worker frees up within QueueWait, the waiting event is queued and
// acknowledged without a redelivery.
func TestFullQueueWaitsBeforeAcknowledging(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	g := newGated()
	tr, _ := startSocket(t, fake, g, 2*time.Second)
	fill(t, fake, tr, g)
	third := fake.DM("U1", "D3", "three")
	time.Sleep(200 * time.Millisecond)
	if _, acked := fake.Envelopes(third.ID); acked != 0 {
		t.Fatal("acknowledged while the queue was full")
	}
	close(g.open)
	eventually.True(t, 5*time.Second, func() bool { return g.times(third.ID) == 1 }, "the waiting event to be handled")
	eventually.True(t, 5*time.Second, func() bool { _, acked := fake.Envelopes(third.ID); return acked == 1 }, "its acknowledgement")
	if sent, acked := fake.Envelopes(third.ID); sent != 1 || acked != 1 {
		t.Errorf("%d envelopes, %d acknowledged; want one of each", sent, acked)
	}
}

// HTTP mode answers 503 to an event the full queue cannot take, so Slack
// retries it, instead of 200 for a request nobody handles.
func TestHTTPModeFullQueueAnswers503(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	tr, err := New(Config{BotToken: "xoxb-1", SigningSecret: "shh", APIURL: fake.APIURL(), Workers: 1, QueueSize: 1, QueueWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	g := newGated()
	if err := tr.Start(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Stop(context.Background()) })
	srv := httptest.NewServer(tr.Handler())
	defer srv.Close()
	post := func(id string) int {
		body := `{"type":"event_callback","team_id":"T1","event_id":"` + id + `","event":{"type":"app_mention","user":"U1","text":"<@UBOT> hi","channel":"C1","ts":"1.1"}}`
		req, _ := http.NewRequest("POST", srv.URL+"/slack/events", strings.NewReader(body))
		for k, v := range sign("shh", time.Now(), body) {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	codes := make(chan int, 2)
	go func() { codes <- post("Ev1") }()
	eventually.True(t, 5*time.Second, func() bool { return g.times("Ev1") == 1 }, "the worker to take the first")
	go func() { codes <- post("Ev2") }()
	eventually.True(t, 5*time.Second, func() bool { return len(tr.work) == 1 }, "the second to be queued")
	if code := post("Ev3"); code != http.StatusServiceUnavailable {
		t.Errorf("full queue: %d, want 503", code)
	}
	close(g.open)
	for range 2 {
		if code := <-codes; code != http.StatusOK {
			t.Errorf("taken request: %d", code)
		}
	}
	if code := post("Ev3"); code != http.StatusOK {
		t.Errorf("Slack's retry: %d", code)
	}
	// Answered once queued (this handler keeps no receipts), not handled.
	eventually.True(t, 5*time.Second, func() bool { return g.times("Ev3") == 1 }, "the retry to be handled")
	for _, id := range []string{"Ev1", "Ev2", "Ev3"} {
		if n := g.times(id); n != 1 {
			t.Errorf("%s handled %d times", id, n)
		}
	}
}

// Stop lets the workers handle every delivery already queued before it
// returns: a rolling restart drops none of them.
func TestStopHandlesWhatWasQueued(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	tr, err := New(Config{BotToken: "xoxb-1", AppToken: "xapp-1", APIURL: fake.APIURL(), Workers: 1, QueueSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	g := newGated()
	if err := tr.Start(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 5*time.Second, func() bool { open, _ := fake.Connected(); return open == 1 }, "the socket to connect")
	var events []bottest.Event
	for i := range 3 {
		events = append(events, fake.DM("U1", "D1", "msg "+strconv.Itoa(i)))
	}
	eventually.True(t, 5*time.Second, func() bool { return g.times(events[0].ID) == 1 && len(tr.work) == 2 }, "all three to be taken")
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- tr.Stop(ctx)
	}()
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while deliveries were queued", err)
	case <-time.After(300 * time.Millisecond):
	}
	eventually.True(t, 5*time.Second, func() bool { open, _ := fake.Connected(); return open == 0 }, "Stop to close the socket")
	close(g.open)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if n := g.times(e.ID); n != 1 {
			t.Errorf("%s handled %d times, want once", e.ID, n)
		}
	}
}
