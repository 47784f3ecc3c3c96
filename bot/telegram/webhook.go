package telegram

import (
	"crypto/subtle"
	"net/http"
	"time"

	"reasonix/internal/intakebudget"
)

// Webhook mode: Telegram POSTs each update to the configured path with
// the secret given to setWebhook in X-Telegram-Bot-Api-Secret-Token. The
// library does not check it, so we do, in constant time, before reading
// the body, which is then read within the service's intake budget.

const secretHeader = "X-Telegram-Bot-Api-Secret-Token"

// maxUpdate bounds an update's body; a message's text is at most 4,096
// characters.
const maxUpdate = 1 << 20

// admit counts a webhook request in t.wg unless Stop has begun.
func (t *Transport) admit() bool {
	t.stopMu.Lock()
	defer t.stopMu.Unlock()
	if t.stopping {
		return false
	}
	t.wg.Add(1)
	return true
}

// Handler serves webhook updates; it answers 503 until Start, once Stop
// has begun, and for an update the handler left. Telegram retries a
// non-2xx answer, and the relay's dedupe makes that harmless.
func (t *Transport) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		got := r.Header.Get(secretHeader)
		if t.cfg.WebhookSecret == "" || subtle.ConstantTimeCompare([]byte(got), []byte(t.cfg.WebhookSecret)) != 1 {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		h := t.handlerLoaded()
		if h == nil || !t.admit() { // not started, or stopping: Telegram retries
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		defer t.wg.Done() // unless handed to the handling goroutine below
		// A body that does not fit the intake budget is answered 429
		// unread, and Telegram delivers the update again.
		body, err := t.cfg.IntakeBudget.Read(r, maxUpdate, nil)
		if err != nil {
			intakebudget.Refuse(w, err)
			return
		}
		p, err := parseUpdate(body.Bytes(), t.self)
		body.Release() // what was parsed holds copies
		if err != nil {
			w.WriteHeader(http.StatusOK) // ignored or unreadable: a retry would not help
			return
		}
		done := make(chan bool, 1) // buffered: the goroutine never waits for a request that answered
		t.wg.Add(1)                // the handling goroutine's own, added while the request's holds Stop
		go func() {
			defer t.wg.Done()
			done <- t.handle(t.ctx, h, p)
		}()
		// Answer within Telegram's patience; handling goes on. An update
		// the handler left (the store or the service failed) is answered
		// 503, so Telegram delivers it again. One still being handled
		// when the window ends is answered 200: it is normally taken by
		// then (the task is stored; what is slow is a paced reply, seconds
		// in a group), and a 503 for every slow one would have Telegram
		// send each again and report the webhook failing.
		select {
		case ok := <-done:
			if !ok {
				http.Error(w, "not handled; try again", http.StatusServiceUnavailable)
				return
			}
		case <-time.After(2500 * time.Millisecond):
		}
		w.WriteHeader(http.StatusOK)
	})
}
