package slack

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/internal/eventually"
)

// ackBound is a short AckWithin, so the tests need not wait Slack's 2 s.
const ackBound = 300 * time.Millisecond

// receipts is a handler that keeps receipts, as the relay does: Receive
// records an event (once per event id; a repeat gets nothing to run) or
// fails as a store that is down would; the handling it returns holds its
// worker until open is closed.
type receipts struct {
	*gated
	fail bool

	mu       sync.Mutex
	recorded map[string]int
}

func newReceipts() *receipts { return &receipts{gated: newGated(), recorded: map[string]int{}} }

func (r *receipts) Receive(ctx context.Context, in bot.Inbound) (func(context.Context), error) {
	if r.fail {
		return nil, errors.New("store down")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recorded[in.EventID]++
	if r.recorded[in.EventID] > 1 {
		return nil, nil
	}
	return func(ctx context.Context) { r.HandleMessage(ctx, in) }, nil
}

func (r *receipts) records(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recorded[id]
}

// An event is acknowledged once recorded, at once, while the only worker
// is busy and the queue is full: its handling has not started. Every one
// is handled once the worker is free (the receipts hands out the
// handling of each recorded event once).
func TestSocketModeAcknowledgesARecordedEventBeforeHandling(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	rec := newReceipts()
	// A long bound here: acknowledging by the bound is the fallback this
	// test must tell apart from acknowledging once recorded, and a loaded
	// machine under -race can take a few hundred milliseconds to record.
	const bound = 4 * time.Second
	startSocketWith(t, fake, rec, Config{AckWithin: bound, Workers: 1, QueueSize: 1})
	var evs []bottest.Event
	for i := range 4 {
		evs = append(evs, fake.DM("U1", "D"+strconv.Itoa(i), "work"))
	}
	for _, ev := range evs {
		eventually.True(t, 5*time.Second, func() bool { _, acked := fake.Envelopes(ev.ID); return acked == 1 }, "the acknowledgement of %s", ev.ID)
	}
	handled := 0
	for _, ev := range evs {
		handled += rec.times(ev.ID)
		if n := rec.records(ev.ID); n != 1 {
			t.Errorf("event %s recorded %d times, want 1", ev.ID, n)
		}
	}
	if handled > 1 {
		t.Errorf("%d events handled while the only worker was held, want at most 1", handled)
	}
	for env, d := range fake.AckLatencies() {
		if d >= bound/2 {
			t.Errorf("envelope %s acknowledged %v after it was sent; the recording is all it waits for", env, d)
		}
	}
	close(rec.open)
	// Two fit (the worker and the queue's slot); the others were left to
	// the relay's recovery pass, which this receipts does not have.
	eventually.True(t, 5*time.Second, func() bool { return rec.times(evs[0].ID)+rec.times(evs[1].ID) == 2 }, "the queued events handled")
}

// An event that cannot be recorded is not acknowledged (Slack sends it
// again) and not handled.
func TestSocketModeLeavesAnUnrecordedEventUnacknowledged(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	rec := newReceipts()
	rec.fail = true
	_, log := startSocketWith(t, fake, rec, Config{AckWithin: ackBound})
	ev := fake.DM("U1", "D1", "lost?")
	// Envelopes are taken one at a time, in order: once the next one is
	// refused too, the first one's acknowledgement would have been sent.
	eventually.True(t, 5*time.Second, func() bool { return log.logged("recording an event failed") }, "the refusal")
	fake.DM("U1", "D1", "and this?")
	eventually.True(t, 5*time.Second, func() bool { return log.count("recording an event failed") >= 2 }, "the second refusal")
	if _, acked := fake.Envelopes(ev.ID); acked != 0 {
		t.Error("an event that was not recorded was acknowledged")
	}
	if rec.times(ev.ID) != 0 {
		t.Error("an event that was not recorded was handled")
	}
}

// A click is not retried by Slack: one still being handled at the bound
// is acknowledged all the same, not reported to the user as failed.
func TestSocketModeAcknowledgesASlowClickAtTheBound(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	g := newGated()
	defer close(g.open)
	startSocketWith(t, fake, g, Config{AckWithin: ackBound})
	env := fake.Click("U2", "D1", "1.5", "ap:a_1:o")
	eventually.True(t, 5*time.Second, func() bool { return len(fake.Unacked()) == 0 }, "the click's acknowledgement")
	if d, ok := fake.AckLatencies()[env]; !ok || d < ackBound {
		t.Errorf("the click was acknowledged after %v (%v), before the bound %v", d, ok, ackBound)
	}
}

// startHTTP starts an HTTP mode transport and serves it.
func startHTTP(t *testing.T, h bot.Handler) (*httptest.Server, *refusals) {
	t.Helper()
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	log := &refusals{}
	tr, err := New(Config{BotToken: "xoxb-1", SigningSecret: "shh", APIURL: fake.APIURL(), AckWithin: ackBound, Logger: slog.New(log)})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Stop(context.Background()) })
	srv := httptest.NewServer(tr.Handler())
	t.Cleanup(srv.Close)
	return srv, log
}

// postEvent posts event id as Slack does; retry > 0 adds Slack's retry
// headers.
func postEvent(t *testing.T, srv *httptest.Server, id string, retry int) int {
	t.Helper()
	body := `{"type":"event_callback","team_id":"T1","event_id":"` + id + `","event":{"type":"app_mention","user":"U1","text":"<@UBOT> hi","channel":"C1","ts":"1.1"}}`
	req, _ := http.NewRequest("POST", srv.URL+"/slack/events", strings.NewReader(body))
	for k, v := range sign("shh", time.Now(), body) {
		req.Header[k] = v
	}
	if retry > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(retry))
		req.Header.Set("X-Slack-Retry-Reason", "http_error")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err) // not Fatal: called from other goroutines too
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// HTTP mode answers 200 once an event is recorded, while its handling is
// held; a retry is answered 200 and not handled again.
func TestHTTPModeAnswersARecordedEvent200BeforeHandling(t *testing.T) {
	rec := newReceipts()
	srv, _ := startHTTP(t, rec)
	begin := time.Now()
	if code := postEvent(t, srv, "Ev1", 0); code != http.StatusOK {
		t.Fatalf("status %d, want 200", code)
	}
	if d := time.Since(begin); d >= ackBound/2 {
		t.Errorf("answered after %v; the recording is all it waits for", d)
	}
	if code := postEvent(t, srv, "Ev1", 1); code != http.StatusOK {
		t.Fatalf("retry: status %d, want 200", code)
	}
	close(rec.open)
	eventually.True(t, 5*time.Second, func() bool { return rec.times("Ev1") == 1 }, "the handling")
	// The retry was answered after Receive gave it nothing to run, so no
	// second handling can be under way.
	if n := rec.times("Ev1"); n != 1 {
		t.Errorf("handled %d times, want 1", n)
	}
}

// HTTP mode answers 503 to an event that cannot be recorded, so Slack
// retries it, and does not handle it.
func TestHTTPModeAnswersAnUnrecordedEvent503(t *testing.T) {
	rec := newReceipts()
	rec.fail = true
	srv, _ := startHTTP(t, rec)
	if code := postEvent(t, srv, "Ev1", 0); code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", code)
	}
	close(rec.open)
	// Answered 503 after Receive failed: no handling was queued.
	if rec.times("Ev1") != 0 {
		t.Error("an event that was not recorded was handled")
	}
}
