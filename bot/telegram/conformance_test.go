package telegram

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"reasonix/bot"
	"reasonix/bot/bottest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// pollHarness is the fake Telegram's side of the conformance suite: long
// polling, a private chat with the bot, and the offset as acknowledgement.
type pollHarness struct {
	fake *bottest.Telegram
}

const suiteChat = 77

func (pollHarness) Channel() string { return strconv.Itoa(suiteChat) }

func (h pollHarness) Send(text string) { h.fake.Send(suiteChat, suiteChat, text, 0) }

func (h pollHarness) Acked(eventID string) bool {
	id, err := strconv.ParseInt(eventID, 10, 64)
	return err == nil && h.fake.Confirmed() > id
}

func (h pollHarness) Text(id string) (string, bool) {
	for _, m := range h.fake.Messages(suiteChat) {
		if strconv.FormatInt(m.ID, 10) == id {
			return m.Text, true
		}
	}
	return "", false
}

func (h pollHarness) Click(id, data string) {
	n, _ := strconv.ParseInt(id, 10, 64)
	h.fake.Click(suiteChat, suiteChat, n, data)
}

func (h pollHarness) Answers() []string {
	var out []string
	for _, a := range h.fake.Answers() {
		out = append(out, a.Text)
	}
	return out
}

func TestTransportConformancePolling(t *testing.T) {
	bottest.TestTransport(t, bottest.Platform{New: func(t *testing.T) (bot.Transport, bottest.Harness) {
		fake := bottest.NewTelegram(t, "7:suite", bottest.SlackLimits{})
		tr, err := New(Config{Token: "7:suite", APIEndpoint: fake.Endpoint(), Cursor: storetest.SQLite(t, store.Config{}), PollTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return tr, pollHarness{fake: fake}
	}})
}

// hookHarness is Telegram in webhook mode: it posts each update to the
// transport's handler with the secret and, as Telegram does, posts it
// again a moment later while it is not answered 200.
type hookHarness struct {
	pollHarness
	srv *httptest.Server

	mu     sync.Mutex
	next   int64
	msgID  int64
	acked  map[int64]bool
	closed bool
}

func (h *hookHarness) Send(text string) {
	h.mu.Lock()
	h.next++
	h.msgID++
	id, msg := h.next, h.msgID+1000
	h.mu.Unlock()
	h.deliver(id, fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"from":{"id":%d},"chat":{"id":%d,"type":"private"},"text":%q}}`,
		id, msg, suiteChat, suiteChat, text))
}

func (h *hookHarness) Click(id, data string) {
	h.mu.Lock()
	h.next++
	upd := h.next
	h.mu.Unlock()
	h.deliver(upd, fmt.Sprintf(`{"update_id":%d,"callback_query":{"id":"cb%d","from":{"id":%d},"data":%q,"message":{"message_id":%s,"chat":{"id":%d,"type":"private"}}}}`,
		upd, upd, suiteChat, data, id, suiteChat))
}

func (h *hookHarness) Acked(eventID string) bool {
	id, err := strconv.ParseInt(eventID, 10, 64)
	h.mu.Lock()
	defer h.mu.Unlock()
	return err == nil && h.acked[id]
}

// deliver posts update id until it is answered 200, in the background.
func (h *hookHarness) deliver(id int64, body string) {
	go func() {
		for {
			h.mu.Lock()
			closed := h.closed
			h.mu.Unlock()
			if closed {
				return
			}
			req, _ := http.NewRequest("POST", h.srv.URL, strings.NewReader(body))
			req.Header.Set(secretHeader, "s3cret")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					h.mu.Lock()
					h.acked[id] = true
					h.mu.Unlock()
					return
				}
			}
			timer := time.NewTimer(50 * time.Millisecond) // Telegram's retry, much sooner
			<-timer.C
		}
	}()
}

func TestTransportConformanceWebhook(t *testing.T) {
	bottest.TestTransport(t, bottest.Platform{New: func(t *testing.T) (bot.Transport, bottest.Harness) {
		fake := bottest.NewTelegram(t, "7:suite", bottest.SlackLimits{})
		tr, err := New(Config{Token: "7:suite", APIEndpoint: fake.Endpoint(), Cursor: memCursor{}, WebhookSecret: "s3cret"})
		if err != nil {
			t.Fatal(err)
		}
		h := &hookHarness{pollHarness: pollHarness{fake: fake}, srv: httptest.NewServer(tr.Handler()), acked: map[int64]bool{}}
		t.Cleanup(func() {
			h.mu.Lock()
			h.closed = true
			h.mu.Unlock()
			h.srv.Close()
		})
		return tr, h
	}})
}
