package slack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/bot/bottest"
	"reasonix/internal/eventually"
	"reasonix/internal/intakebudget"
	"reasonix/internal/intakebudget/intakebudgettest"
)

// garbageSigned signs r with a fresh timestamp and a random, well-formed
// signature.
func garbageSigned(r *http.Request) {
	mac := make([]byte, 32)
	_, _ = rand.Read(mac)
	r.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(time.Now().Unix(), 10))
	r.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac))
}

// TestHTTPModeBurstIsBounded: the burst of garbage-signed uploads that
// took the service to gigabytes, against the Events API endpoint. 40
// concurrent 25 MiB POSTs are 413 before a byte is read; 40 of the
// largest allowed size (1 MiB) on a budget with room for four: four are
// read and refused 401, 36 are 429 with Retry-After unread, and a signed
// event sent while the four are still uploading is taken. A malformed or
// stale signature is 401 unread; a chunked upload stops at the limit. No
// moment held more than the budget.
func TestHTTPModeBurstIsBounded(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	budget := intakebudget.New(4<<20 + 512<<10)
	tr, err := New(Config{BotToken: "xoxb-1", SigningSecret: "shh", APIURL: fake.APIURL(), IntakeBudget: budget})
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
	for i := range senders {
		r, body := intakebudgettest.Post("/slack/events", 25<<20, false, nil)
		garbageSigned(r)
		wg.Go(func() {
			if w := serve(r); w.Code != http.StatusRequestEntityTooLarge || body.BytesRead() != 0 {
				t.Errorf("25 MiB sender %d: %d after %d bytes", i, w.Code, body.BytesRead())
			}
		})
	}
	wg.Wait()

	gate := make(chan struct{})
	refused := make(chan struct{}, senders)
	codes := make([]int, senders)
	var reads [senders]int64
	for i := range senders {
		r, body := intakebudgettest.Post("/slack/events", maxBody, false, gate)
		garbageSigned(r)
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
	event := `{"type":"event_callback","team_id":"T1","event_id":"Ev1","event":{"type":"app_mention","user":"U1","text":"<@UBOT> hi","channel":"C1","ts":"1.1"}}`
	r := httptest.NewRequest("POST", "/slack/events", strings.NewReader(event))
	r.Header = sign("shh", time.Now(), event)
	if w := serve(r); w.Code != http.StatusOK {
		t.Fatalf("signed event during the burst: %d %s", w.Code, w.Body)
	}
	close(gate)
	wg.Wait()
	counts := map[int]int{}
	for i, c := range codes {
		counts[c]++
		if c == http.StatusTooManyRequests && reads[i] != 0 || c == http.StatusUnauthorized && reads[i] != maxBody {
			t.Errorf("sender %d: %d after %d bytes", i, c, reads[i])
		}
	}
	if counts[http.StatusUnauthorized] != 4 || counts[http.StatusTooManyRequests] != senders-4 {
		t.Fatalf("answers %v, want four 401 and %d 429", counts, senders-4)
	}

	for name, set := range map[string]func(http.Header){
		"malformed": func(h http.Header) { h.Set("X-Slack-Signature", "v0=zz") },
		"stale": func(h http.Header) {
			h.Set("X-Slack-Request-Timestamp", strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10))
		},
		"missing": func(h http.Header) { h.Del("X-Slack-Signature") },
	} {
		r, body := intakebudgettest.Post("/slack/events", maxBody, false, nil)
		garbageSigned(r)
		set(r.Header)
		if w := serve(r); w.Code != http.StatusUnauthorized || body.BytesRead() != 0 {
			t.Errorf("%s signature: %d after %d bytes", name, w.Code, body.BytesRead())
		}
	}
	r, body := intakebudgettest.Post("/slack/events", 25<<20, true, nil)
	garbageSigned(r)
	if w := serve(r); w.Code != http.StatusRequestEntityTooLarge || body.BytesRead() > maxBody+1 {
		t.Errorf("chunked 25 MiB: %d after %d bytes", w.Code, body.BytesRead())
	}
	if budget.Peak() > budget.Limit() || budget.InUse() != 0 {
		t.Fatalf("budget peak %d of %d, %d still in use", budget.Peak(), budget.Limit(), budget.InUse())
	}
	eventually.True(t, 5*time.Second, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.in) == 1 && rec.in[0].Text == "hi"
	}, "the signed event was not handled alone")
}

// FuzzSignatureHeader: whatever X-Slack-Signature says, the check either
// refuses it before the body is read or holds exactly the 32 bytes its
// "v0=" and 64 hex digits encode; and the body then verifies only under
// the signing secret.
func FuzzSignatureHeader(f *testing.F) {
	now := time.Unix(1_700_000_000, 0)
	good := sign("shh", now, "body").Get("X-Slack-Signature")
	for _, s := range []string{good, "", "v0=", "v1=" + good[3:], "v0=" + strings.ToUpper(good[3:]), good + "0", good[:66], "v0=zz" + good[5:]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		h := http.Header{}
		h.Set("X-Slack-Request-Timestamp", strconv.FormatInt(now.Unix(), 10))
		h.Set("X-Slack-Signature", header)
		c, err := newSignatureCheck("shh", h, now)
		if err != nil {
			return
		}
		if len(c.sig) != 32 || !strings.EqualFold(h.Get("X-Slack-Signature"), "v0="+hex.EncodeToString(c.sig)) {
			t.Fatalf("%q held %x", header, c.sig)
		}
		c.Write([]byte("body"))
		if (c.verify() == nil) != strings.EqualFold(h.Get("X-Slack-Signature"), good) {
			t.Fatalf("%q: verify %v", header, c.verify())
		}
	})
}
