package telegram

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/internal/eventually"
)

// recorder keeps receipts (a bot.Receiver): it records the messages
// handed to it. With leave set it fails to record each, as the relay does
// when its store fails; with hold set the handling it returns waits for
// hold to close, as slow handling would.
type recorder struct {
	mu    sync.Mutex
	in    []bot.Inbound
	leave bool
	hold  chan struct{}
}

func (r *recorder) HandleMessage(ctx context.Context, in bot.Inbound) {
	if run, _ := r.Receive(ctx, in); run != nil {
		run(ctx)
	}
}

func (r *recorder) Receive(_ context.Context, in bot.Inbound) (func(context.Context), error) {
	r.mu.Lock()
	r.in = append(r.in, in)
	leave, hold := r.leave, r.hold
	r.mu.Unlock()
	if leave {
		return nil, errors.New("store down")
	}
	return func(context.Context) {
		if hold != nil {
			<-hold
		}
	}, nil
}

func (r *recorder) set(leave bool, hold chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leave, r.hold = leave, hold
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.in)
}

func (r *recorder) HandleClick(context.Context, bot.Click) string { return "" }

type memCursor struct{}

func (memCursor) ChatCursor(context.Context, string) (int64, error)  { return 0, nil }
func (memCursor) SetChatCursor(context.Context, string, int64) error { return nil }

// startWebhook starts a webhook-mode transport (secret "s3cret") on a
// fake bot, handing updates to a recorder, behind a test server closed
// when the test ends. Stopping the transport is the test's.
func startWebhook(t *testing.T) (*Transport, *recorder, *httptest.Server) {
	t.Helper()
	fake := bottest.NewTelegram(t, "7:tok", bottest.SlackLimits{})
	tr, err := New(Config{Token: "7:tok", APIEndpoint: fake.Endpoint(), Cursor: memCursor{}, WebhookSecret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if err := tr.Start(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tr.Handler())
	t.Cleanup(srv.Close)
	return tr, rec, srv
}

func TestWebhookChecksTheSecretHeader(t *testing.T) {
	tr, rec, srv := startWebhook(t)
	defer tr.Stop(context.Background())
	update := `{"update_id":5,"message":{"message_id":9,"from":{"id":11},"chat":{"id":11,"type":"private"},"text":"hello"}}`
	post := func(secret *string) int {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(update))
		if secret != nil {
			req.Header.Set(secretHeader, *secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	wrong, right, empty := "nope", "s3cret", ""
	for name, s := range map[string]*string{"missing": nil, "wrong": &wrong, "empty": &empty} {
		if code := post(s); code != http.StatusForbidden {
			t.Errorf("%s secret: %d", name, code)
		}
	}
	if len(rec.in) != 0 {
		t.Fatal("a refused update was handled")
	}
	if code := post(&right); code != 200 {
		t.Errorf("right secret: %d", code)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.in) != 1 || rec.in[0].Text != "hello" || rec.in[0].EventID != "5" {
		t.Errorf("handled %+v", rec.in)
	}
}

// In webhook mode with a public URL, Start registers the URL and the
// secret with setWebhook (raw params: secret_token is newer than the
// library), retrying through an outage; without one it registers nothing.
func TestWebhookRegistersItself(t *testing.T) {
	fake := bottest.NewTelegram(t, "7:tok", bottest.SlackLimits{})
	fake.FailSetWebhook(2)
	tr, err := New(Config{Token: "7:tok", APIEndpoint: fake.Endpoint(), Cursor: memCursor{}, WebhookSecret: "s3cret",
		WebhookURL: "https://reasonix.example/telegram/webhook"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(context.Background(), &recorder{}); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 20*time.Second, func() bool { return len(fake.Webhooks()) > 0 }, "the webhook to be registered")
	if err := tr.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := fake.Webhooks()
	want := bottest.TelegramWebhook{URL: "https://reasonix.example/telegram/webhook", SecretToken: "s3cret", AllowedUpdates: `["message","callback_query"]`}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("setWebhook calls = %+v, want one %+v", got, want)
	}

	plain := bottest.NewTelegram(t, "7:tok", bottest.SlackLimits{})
	tr2, err := New(Config{Token: "7:tok", APIEndpoint: plain.Endpoint(), Cursor: memCursor{}, WebhookSecret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.Start(context.Background(), &recorder{}); err != nil {
		t.Fatal(err)
	}
	// Stop waits for whatever Start began: a registration would be done.
	if err := tr2.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(plain.Webhooks()); n != 0 {
		t.Errorf("registered %d webhooks without a URL", n)
	}
}

// A webhook request under way when Stop begins (its body still arriving)
// is handled before Stop returns, not after, when the relay may be gone;
// a request after Stop began is refused with 503 for Telegram to retry.
func TestWebhookRequestDuringStop(t *testing.T) {
	tr, rec, srv := startWebhook(t)
	// With "Expect: 100-continue" the client sends the body only once the
	// handler reads it, so the first write below returning means the
	// request is being handled.
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
	post := func(body io.Reader) (int, error) {
		req, _ := http.NewRequest("POST", srv.URL, body)
		req.Header.Set(secretHeader, "s3cret")
		req.Header.Set("Expect", "100-continue")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	update := `{"update_id":1,"message":{"message_id":1,"from":{"id":11},"chat":{"id":11,"type":"private"},"text":"hi"}}`
	pr, pw := io.Pipe()
	defer pw.Close() // a failed test must not leave the request, and srv.Close, hanging
	answered := make(chan int, 1)
	go func() {
		code, err := post(pr)
		if err != nil {
			t.Error(err)
		}
		answered <- code
	}()
	if _, err := pw.Write([]byte(update[:20])); err != nil { // the handler reads the body now
		t.Fatal(err)
	}
	stopped := make(chan int, 1) // how many updates were handled when Stop returned
	go func() {
		if err := tr.Stop(context.Background()); err != nil {
			t.Error(err)
		}
		rec.mu.Lock()
		stopped <- len(rec.in)
		rec.mu.Unlock()
	}()
	select {
	case n := <-stopped:
		t.Fatalf("Stop returned (%d handled) while a request was under way", n)
	case <-time.After(300 * time.Millisecond):
	}
	if code, err := post(strings.NewReader(update)); err != nil || code != http.StatusServiceUnavailable {
		t.Errorf("a request after Stop began: %d, %v; want 503", code, err)
	}
	if _, err := pw.Write([]byte(update[20:])); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if n := <-stopped; n != 1 {
		t.Errorf("Stop returned with %d updates handled, want 1", n)
	}
	if code := <-answered; code != http.StatusOK {
		t.Errorf("the request under way was answered %d, want 200", code)
	}
}

// postUpdate posts body to srv with the right secret and returns the
// answer's status.
func postUpdate(t *testing.T, srv *httptest.Server, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
	req.Header.Set(secretHeader, "s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// An update the handler could not record (its store failed) is answered
// 503, so Telegram delivers it again; once recorded, 200 — at once, before
// its handling, however slow that is: from then on the record makes it
// handled.
func TestWebhookAnswers503ForAnUpdateTheHandlerLeft(t *testing.T) {
	tr, rec, srv := startWebhook(t)
	defer tr.Stop(context.Background())
	update := `{"update_id":5,"message":{"message_id":9,"from":{"id":11},"chat":{"id":11,"type":"private"},"text":"hello"}}`
	rec.set(true, nil)
	if code := postUpdate(t, srv, update); code != http.StatusServiceUnavailable {
		t.Errorf("an update the handler left: %d, want 503", code)
	}
	rec.set(false, nil)
	if code := postUpdate(t, srv, update); code != http.StatusOK {
		t.Errorf("the same update handled: %d, want 200", code)
	}
	if n := rec.count(); n != 2 {
		t.Errorf("handled %d times, want 2", n)
	}

	hold := make(chan struct{})
	defer close(hold)
	rec.set(false, hold)
	if code := postUpdate(t, srv, update); code != http.StatusOK {
		t.Errorf("a recorded update whose handling is still held: %d, want 200 before it is handled", code)
	}
}
