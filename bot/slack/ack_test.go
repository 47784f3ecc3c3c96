package slack

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/internal/eventually"
)

// ackBound is a short AckWithin, so the tests need not wait Slack's 2 s.
const ackBound = 300 * time.Millisecond

// pause handles every delivery in d, as a relay on a sluggish store would.
type pause struct {
	d time.Duration
	*gated
}

func (p pause) HandleMessage(ctx context.Context, in bot.Inbound) {
	p.gated.mu.Lock()
	p.seen[in.EventID]++
	p.gated.mu.Unlock()
	time.Sleep(p.d)
}

// An event handled within the bound is acknowledged, and only after its
// handler returned.
func TestSocketModeAcknowledgesAnEventOnceHandled(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	const took = 100 * time.Millisecond
	startSocketWith(t, fake, pause{d: took, gated: newGated()}, Config{AckWithin: ackBound})
	ev := fake.DM("U1", "D1", "quick")
	eventually.True(t, 5*time.Second, func() bool { _, acked := fake.Envelopes(ev.ID); return acked == 1 }, "the acknowledgement")
	if sent, _ := fake.Envelopes(ev.ID); sent != 1 {
		t.Errorf("%d envelopes, want 1", sent)
	}
	for env, d := range fake.AckLatencies() {
		if d < took {
			t.Errorf("envelope %s acknowledged %v after it was sent, before its %v handling ended", env, d, took)
		}
	}
}

// An event still being handled at the bound is not acknowledged: Slack
// retries it, the retry waits for the first handling instead of being
// handled again, and is acknowledged once that is done.
func TestSocketModeLeavesASlowEventForSlackToRetry(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	// Slack retries an unacknowledged event after 3 s, 1 min and 5 min;
	// shortened here.
	fake.RetryUnacked(ackBound+100*time.Millisecond, time.Minute)
	g := newGated()
	_, log := startSocketWith(t, fake, g, Config{AckWithin: ackBound})
	ev := fake.DM("U1", "D1", "slow")
	eventually.True(t, 5*time.Second, func() bool { sent, _ := fake.Envelopes(ev.ID); return sent == 2 }, "Slack to retry the event")
	eventually.True(t, 5*time.Second, func() bool { return log.logged("a retry waits") }, "the retry to wait for the first handling")
	if _, acked := fake.Envelopes(ev.ID); acked != 0 {
		t.Fatalf("an event still being handled was acknowledged (%d envelopes)", acked)
	}
	close(g.open)
	eventually.True(t, 5*time.Second, func() bool { _, acked := fake.Envelopes(ev.ID); return acked == 1 }, "the retry's acknowledgement")
	if n := g.times(ev.ID); n != 1 {
		t.Errorf("the event was handled %d times, want once", n)
	}
	if u := fake.Unacked(); len(u) != 1 {
		t.Errorf("unacknowledged envelopes %v, want only the first", u)
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

// HTTP mode answers 200 to an event handled within the bound, after its
// handler returned.
func TestHTTPModeAnswersAHandledEvent200(t *testing.T) {
	const took = 100 * time.Millisecond
	p := pause{d: took, gated: newGated()}
	srv, _ := startHTTP(t, p)
	start := time.Now()
	if code := postEvent(t, srv, "EvQuick", 0); code != http.StatusOK {
		t.Fatalf("a quickly handled event: %d, want 200", code)
	}
	if d := time.Since(start); d < took {
		t.Errorf("answered after %v, before the %v handling ended", d, took)
	}
	if n := p.times("EvQuick"); n != 1 {
		t.Errorf("handled %d times", n)
	}
}

// HTTP mode answers 503 to an event still being handled at the bound, so
// Slack retries it; a retry while it is handled is not handled again, and
// one after it was is answered 200.
func TestHTTPModeAnswersASlowEvent503(t *testing.T) {
	g := newGated()
	srv, log := startHTTP(t, g)
	start := time.Now()
	if code := postEvent(t, srv, "EvSlow", 0); code != http.StatusServiceUnavailable {
		t.Fatalf("an event still being handled: %d, want 503", code)
	}
	if d := time.Since(start); d < ackBound || d > ackBound+time.Second {
		t.Errorf("answered after %v; the bound is %v", d, ackBound)
	}
	if code := postEvent(t, srv, "EvSlow", 1); code != http.StatusServiceUnavailable {
		t.Errorf("a retry while the first is handled: %d, want 503", code)
	}
	codes := make(chan int, 1)
	go func() { codes <- postEvent(t, srv, "EvSlow", 2) }()
	eventually.True(t, 5*time.Second, func() bool { return log.count("a retry waits") == 2 }, "the second retry to wait for the first handling")
	close(g.open)
	if code := <-codes; code != http.StatusOK {
		t.Errorf("a retry answered as the first handling ends: %d, want 200", code)
	}
	if n := g.times("EvSlow"); n != 1 {
		t.Errorf("the event was handled %d times, want once", n)
	}
}

// failing is a relay whose store fails: it is not done with any message
// (it left the delivery claimed for a redelivery).
type failing struct{ *gated }

func (f failing) HandleDelivery(ctx context.Context, in bot.Inbound) bool {
	f.gated.mu.Lock()
	f.seen[in.EventID]++
	f.gated.mu.Unlock()
	return false
}

// An event the handler is not done with is left for Slack to retry, in
// both modes: handled quickly, but not acknowledged.
func TestAnEventLeftForARetryIsNotAcknowledged(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	fake.RetryUnacked(ackBound+100*time.Millisecond, time.Minute)
	f := failing{newGated()}
	startSocketWith(t, fake, f, Config{AckWithin: ackBound})
	ev := fake.DM("U1", "D1", "store down")
	eventually.True(t, 5*time.Second, func() bool { return f.times(ev.ID) == 2 }, "Slack's retry to be handled")
	if sent, acked := fake.Envelopes(ev.ID); acked != 0 {
		t.Errorf("%d of %d envelopes acknowledged; want none", acked, sent)
	}

	srv, _ := startHTTP(t, f)
	if code := postEvent(t, srv, "EvDown", 0); code != http.StatusServiceUnavailable {
		t.Errorf("HTTP mode: %d, want 503", code)
	}
	if n := f.times("EvDown"); n != 1 {
		t.Errorf("HTTP mode: handled %d times, want once", n)
	}
}
