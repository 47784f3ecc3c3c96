package slack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/internal/eventually"
)

type recorder struct {
	mu     sync.Mutex
	in     []bot.Inbound
	clicks []bot.Click
}

func (r *recorder) HandleMessage(_ context.Context, in bot.Inbound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.in = append(r.in, in)
}

func (r *recorder) HandleClick(_ context.Context, c bot.Click) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clicks = append(r.clicks, c)
	return "refused for the test"
}

func sign(secret string, ts time.Time, body string) http.Header {
	h := http.Header{}
	s := strconv.FormatInt(ts.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + s + ":" + body))
	h.Set("X-Slack-Request-Timestamp", s)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return h
}

func TestHTTPModeVerifiesSignatures(t *testing.T) {
	fake := bottest.NewSlack(t, bottest.SlackLimits{})
	tr, err := New(Config{BotToken: "xoxb-1", SigningSecret: "shh", APIURL: fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tr.Handler())
	defer srv.Close()
	post := func(path, body string, h http.Header) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	event := `{"type":"event_callback","team_id":"T1","event_id":"Ev9","event":{"type":"app_mention","user":"U1","text":"<@UBOT> hi","channel":"C1","ts":"1.1"}}`
	if code, _ := post("/slack/events", event, sign("shh", time.Now(), event)); code != http.StatusServiceUnavailable {
		t.Errorf("before Start: %d", code)
	}
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := tr.Start(ctx, rec); err != nil {
		t.Fatal(err)
	}
	defer tr.Stop(context.Background())

	for name, h := range map[string]http.Header{
		"stale":   sign("shh", time.Now().Add(-6*time.Minute), event),
		"wrong":   sign("not-the-secret", time.Now(), event),
		"missing": {},
	} {
		if code, _ := post("/slack/events", event, h); code != http.StatusUnauthorized {
			t.Errorf("%s signature: %d", name, code)
		}
	}
	tampered := sign("shh", time.Now(), event)
	if code, _ := post("/slack/events", strings.Replace(event, "hi", "rm -rf", 1), tampered); code != http.StatusUnauthorized {
		t.Errorf("tampered body: %d", code)
	}
	if len(rec.in) != 0 {
		t.Fatalf("a refused request was handled: %+v", rec.in)
	}
	challenge := `{"type":"url_verification","challenge":"abc123"}`
	if code, body := post("/slack/events", challenge, sign("shh", time.Now(), challenge)); code != 200 || body != "abc123" {
		t.Errorf("challenge: %d %q", code, body)
	}
	if code, _ := post("/slack/events", event, sign("shh", time.Now(), event)); code != 200 {
		t.Errorf("valid: %d", code)
	}
	form := url.Values{"payload": {`{"type":"block_actions","team":{"id":"T1"},"user":{"id":"U2"},"channel":{"id":"C1"},"container":{"message_ts":"1.2","channel_id":"C1"},"actions":[{"value":"ap:a_1:o"}]}`}}.Encode()
	if code, _ := post("/slack/interactions", form, sign("shh", time.Now(), form)); code != 200 {
		t.Errorf("interaction: %d", code)
	}
	cmd := url.Values{"command": {"/reasonix"}, "text": {"status"}, "user_id": {"U1"}, "channel_id": {"C1"}, "team_id": {"T1"}, "trigger_id": {"tr1"}}.Encode()
	if code, _ := post("/slack/commands", cmd, sign("shh", time.Now(), cmd)); code != 200 {
		t.Errorf("command: %d", code)
	}
	eventually.True(t, 5*time.Second, func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.in) == 2 && len(rec.clicks) == 1
	}, "two messages and a click handled")
	if rec.in[0].Text != "hi" || rec.in[1].Text != "status" || rec.clicks[0].User != "U2" {
		t.Errorf("handled %+v %+v", rec.in, rec.clicks)
	}
	eventually.True(t, 5*time.Second, func() bool { return len(fake.Ephemerals()) > 0 }, "the click's answer")
	if e := fake.Ephemerals(); len(e) != 1 || e[0].User != "U2" {
		t.Errorf("click answer: %+v", e)
	}
}
