package slack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"reasonix/internal/intakebudget"
)

// HTTP mode: Slack POSTs events, interactions and slash commands to the
// service's address. Every request's timestamp and signature header are
// checked before its body is read; the body is read within the service's
// intake budget, the signature computed as it is read and verified before
// anything of it is parsed. Each request is answered within Slack's three seconds:
// an event 200 once recorded in the store (its handling follows), 503
// when it could not be recorded, so that Slack retries it
// (X-Slack-Retry-Num counts the retries; the relay dedupes them by
// event_id). See deliver.go.

const (
	maxBody = 1 << 20
	// maxSkew is how old a signed request may be; older ones are replays.
	maxSkew = 5 * time.Minute
)

var errSignature = errors.New("slack: bad request signature")

// signatureCheck is Slack's v0 signature of one request: the HMAC-SHA256
// under the signing secret of "v0:<timestamp>:<body>", fed the body as it
// is read.
type signatureCheck struct {
	mac hash.Hash
	sig []byte
}

// newSignatureCheck checks what the headers alone can show — a timestamp
// within maxSkew (older ones are replays), a signature of the right form
// — and starts the HMAC.
func newSignatureCheck(secret string, h http.Header, now time.Time) (*signatureCheck, error) {
	ts := h.Get("X-Slack-Request-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, errSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > maxSkew || d < -maxSkew {
		return nil, errSignature
	}
	hexSig, ok := strings.CutPrefix(h.Get("X-Slack-Signature"), "v0=")
	if !ok || len(hexSig) != 2*sha256.Size {
		return nil, errSignature
	}
	sig, err := hex.DecodeString(hexSig)
	if err != nil {
		return nil, errSignature
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	return &signatureCheck{mac: mac, sig: sig}, nil
}

// Write feeds the body to the HMAC; it never fails.
func (c *signatureCheck) Write(p []byte) (int, error) { return c.mac.Write(p) }

func (c *signatureCheck) verify() error {
	if !hmac.Equal(c.sig, c.mac.Sum(nil)) {
		return errSignature
	}
	return nil
}

// Handler serves /slack/events, /slack/interactions and /slack/commands
// in HTTP mode; it answers 503 until Start.
func (t *Transport) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /slack/events", t.serveEvents)
	mux.HandleFunc("POST /slack/interactions", t.serveInteraction)
	mux.HandleFunc("POST /slack/commands", t.serveCommand)
	return mux
}

// read verifies and returns the body, which the caller releases once done
// with it; false means it answered already: 401 for a bad signature, 413
// or 429 (with Retry-After) when the intake budget refused the body.
func (t *Transport) read(w http.ResponseWriter, r *http.Request) (*intakebudget.Body, bool) {
	if t.handler() == nil {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return nil, false
	}
	check, err := newSignatureCheck(t.cfg.SigningSecret, r.Header, time.Now())
	if err != nil {
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return nil, false
	}
	body, err := t.cfg.IntakeBudget.Read(r, maxBody, check)
	if err != nil {
		intakebudget.Refuse(w, err)
		return nil, false
	}
	if err := check.verify(); err != nil {
		body.Release()
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

func (t *Transport) serveEvents(w http.ResponseWriter, r *http.Request) {
	raw, ok := t.read(w, r)
	if !ok {
		return
	}
	defer raw.Release()
	body := raw.Bytes()
	var probe struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	if json.Unmarshal(body, &probe) != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	if probe.Type == "url_verification" {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, probe.Challenge)
		return
	}
	in, err := parseEvent(body, t.botUser)
	if err != nil {
		t.ignore("events", err)
		w.WriteHeader(http.StatusOK) // nothing to retry
		return
	}
	if !t.accept(r.Context(), t.handler(), in, time.Now().Add(t.cfg.AckWithin)) {
		// Not 200: Slack does not send an acknowledged event again.
		http.Error(w, "not recorded; retry", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (t *Transport) serveInteraction(w http.ResponseWriter, r *http.Request) {
	body, ok := t.read(w, r)
	if !ok {
		return
	}
	defer body.Release()
	form, err := parseForm(body.Bytes())
	if err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	c, err := parseInteraction([]byte(form.Get("payload")))
	if err != nil {
		t.ignore("interactive", err)
		w.WriteHeader(http.StatusOK)
		return
	}
	h := t.handler()
	// A click is not retried by Slack: one still being handled at the
	// bound is answered 200 (the handling goes on), not a false error.
	if !t.within(r.Context(), func(ctx context.Context) {
		if answer := h.HandleClick(ctx, c); answer != "" {
			t.ephemeral(ctx, c.Channel, c.User, answer)
		}
	}) {
		busy(w)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (t *Transport) serveCommand(w http.ResponseWriter, r *http.Request) {
	body, ok := t.read(w, r)
	if !ok {
		return
	}
	defer body.Release()
	form, err := parseForm(body.Bytes())
	if err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	raw, _ := json.Marshal(slashPayload{Command: form.Get("command"), Text: form.Get("text"), UserID: form.Get("user_id"),
		ChannelID: form.Get("channel_id"), TeamID: form.Get("team_id"), TriggerID: form.Get("trigger_id")})
	in, err := parseSlash(raw, t.cfg.SlashCommand)
	if err != nil {
		http.Error(w, "bad command", http.StatusBadRequest)
		return
	}
	h := t.handler()
	// Nor is a command retried; as a click.
	if !t.within(r.Context(), func(ctx context.Context) { h.HandleMessage(ctx, in) }) {
		busy(w)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// within runs fn (a click's or a command's handling) on a worker and
// waits for it up to AckWithin; false when the queue stayed full and
// nothing was run: the request is answered 503 rather than 200 for a
// request nobody will handle.
func (t *Transport) within(ctx context.Context, fn func(context.Context)) bool {
	deadline := time.Now().Add(t.cfg.AckWithin)
	f := t.deliver(ctx, deadline, fn)
	if f == nil {
		t.log.Warn("slack: intake queue full; refusing a request")
		return false
	}
	f.wait(deadline)
	return true
}

// busy answers a request the queue could not take.
func busy(w http.ResponseWriter) { http.Error(w, "busy; retry", http.StatusServiceUnavailable) }

func parseForm(body []byte) (url.Values, error) { return url.ParseQuery(string(body)) }
