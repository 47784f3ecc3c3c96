package telegram

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"reasonix/bot"
	"reasonix/bot/bottest"
)

type recorder struct {
	mu sync.Mutex
	in []bot.Inbound
}

func (r *recorder) HandleMessage(_ context.Context, in bot.Inbound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.in = append(r.in, in)
}

func (r *recorder) HandleClick(context.Context, bot.Click) string { return "" }

type memCursor struct{}

func (memCursor) ChatCursor(context.Context, string) (int64, error)  { return 0, nil }
func (memCursor) SetChatCursor(context.Context, string, int64) error { return nil }

func TestWebhookChecksTheSecretHeader(t *testing.T) {
	fake := bottest.NewTelegram(t, "7:tok", bottest.SlackLimits{})
	tr, err := New(Config{Token: "7:tok", APIEndpoint: fake.Endpoint(), Cursor: memCursor{}, WebhookSecret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if err := tr.Start(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	defer tr.Stop(context.Background())
	srv := httptest.NewServer(tr.Handler())
	defer srv.Close()
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
