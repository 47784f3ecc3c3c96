package telegram

import (
	"context"
	"crypto/subtle"
	"net/http"
	"time"

	"reasonix/bot"
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
// has begun, and for an update the handler could not record (see
// bot.Receiver). Telegram retries a non-2xx answer, and the receipts make
// that harmless.
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
		defer t.wg.Done() // the request's own; a handling goroutine adds its own
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
		if p.Click != nil {
			t.within(func(ctx context.Context) { t.click(ctx, h, p) })
			w.WriteHeader(http.StatusOK)
			return
		}
		// Recorded, the update is answered 200 at once and handled after;
		// not recorded (the store failed), it is answered 503, so Telegram
		// delivers it again.
		rctx, cancel := context.WithTimeout(r.Context(), answerWithin)
		run, recorded, err := bot.Receive(rctx, h, *p.In)
		cancel()
		if err != nil {
			t.log.Warn("telegram: recording an update failed; answering 503 for Telegram to send it again", "update", p.UpdateID, "err", err)
			http.Error(w, "not recorded; try again", http.StatusServiceUnavailable)
			return
		}
		if run != nil && recorded {
			t.wg.Add(1) // the handling goroutine's own, added while the request's holds Stop
			go func() {
				defer t.wg.Done()
				run(t.ctx)
			}()
		} else if run != nil {
			t.within(run)
		}
		w.WriteHeader(http.StatusOK)
	})
}

// answerWithin is how long a webhook request waits for a record or a
// handling before it is answered: within Telegram's patience.
const answerWithin = 2500 * time.Millisecond

// within runs fn (a click's handling, or the handling of a handler that
// keeps no receipts) under the handlers' context and waits for it up to
// answerWithin; the handling goes on after. One still running then is
// answered 200 all the same: a click is not worth a redelivery, and a 503
// for every slow one would have Telegram report the webhook failing.
func (t *Transport) within(fn func(context.Context)) {
	done := make(chan struct{})
	t.wg.Add(1) // the handling goroutine's own, added while the request's holds Stop
	go func() {
		defer t.wg.Done()
		defer close(done)
		fn(t.ctx)
	}()
	timer := time.NewTimer(answerWithin)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	}
}
