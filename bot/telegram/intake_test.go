package telegram

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"reasonix/bot/bottest"
	"reasonix/internal/intakebudget"
	"reasonix/internal/intakebudget/intakebudgettest"
)

// TestWebhookBurstIsBounded: the burst of garbage uploads that took the
// service to gigabytes, against the webhook endpoint. 40 concurrent 25
// MiB POSTs without the secret are 403, and with it 413, before a byte is
// read; 40 of the largest allowed size (1 MiB) with the secret on a budget
// with room for four: four are read (and ignored, not being updates), 36
// are 429 with Retry-After unread, and an update sent while the four are
// still uploading is taken. No moment held more than the budget.
func TestWebhookBurstIsBounded(t *testing.T) {
	fake := bottest.NewTelegram(t, "7:tok", bottest.SlackLimits{})
	budget := intakebudget.New(4<<20 + 512<<10)
	tr, err := New(Config{Token: "7:tok", APIEndpoint: fake.Endpoint(), Cursor: memCursor{}, WebhookSecret: "s3cret", IntakeBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if err := tr.Start(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	defer tr.Stop(context.Background())
	h := tr.Handler()
	serve := func(r *http.Request) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	const senders = 40

	var wg sync.WaitGroup
	for i := range 2 * senders {
		r, body := intakebudgettest.Post("/telegram/webhook", 25<<20, false, nil)
		want := http.StatusForbidden
		if i%2 == 1 {
			r.Header.Set(secretHeader, "s3cret")
			want = http.StatusRequestEntityTooLarge
		} else {
			r.Header.Set(secretHeader, "guess")
		}
		wg.Go(func() {
			if w := serve(r); w.Code != want || body.BytesRead() != 0 {
				t.Errorf("25 MiB sender %d: %d after %d bytes, want %d unread", i, w.Code, body.BytesRead(), want)
			}
		})
	}
	wg.Wait()

	gate := make(chan struct{})
	refused := make(chan struct{}, senders)
	codes := make([]int, senders)
	var reads [senders]int64
	for i := range senders {
		r, body := intakebudgettest.Post("/telegram/webhook", maxUpdate, false, gate)
		r.Header.Set(secretHeader, "s3cret")
		wg.Go(func() {
			w := serve(r)
			codes[i], reads[i] = w.Code, body.BytesRead()
			if w.Code == http.StatusTooManyRequests {
				if w.Header().Get("Retry-After") == "" {
					t.Errorf("sender %d: 429 without Retry-After", i)
				}
				refused <- struct{}{}
			}
		})
	}
	for range senders - 4 {
		<-refused
	}
	update := `{"update_id":5,"message":{"message_id":9,"from":{"id":11},"chat":{"id":11,"type":"private"},"text":"hello"}}`
	r := httptest.NewRequest("POST", "/telegram/webhook", strings.NewReader(update))
	r.Header.Set(secretHeader, "s3cret")
	if w := serve(r); w.Code != http.StatusOK {
		t.Fatalf("update during the burst: %d %s", w.Code, w.Body)
	}
	close(gate)
	wg.Wait()
	counts := map[int]int{}
	for i, c := range codes {
		counts[c]++
		if c == http.StatusTooManyRequests && reads[i] != 0 || c == http.StatusOK && reads[i] != maxUpdate {
			t.Errorf("sender %d: %d after %d bytes", i, c, reads[i])
		}
	}
	if counts[http.StatusOK] != 4 || counts[http.StatusTooManyRequests] != senders-4 {
		t.Fatalf("answers %v, want four 200 and %d 429", counts, senders-4)
	}
	if budget.Peak() > budget.Limit() || budget.InUse() != 0 {
		t.Fatalf("budget peak %d of %d, %d still in use", budget.Peak(), budget.Limit(), budget.InUse())
	}
	if n := rec.count(); n != 1 {
		t.Fatalf("%d updates handled, want the signed one only", n)
	}
}
