package redact

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	r := New("sk-live-0123456789", "short", "  ", "sk-live-0123456789-extended", "sk-live-0123456789")
	got := r.String("key=sk-live-0123456789-extended and sk-live-0123456789; short stays")
	if want := "key=[redacted] and [redacted]; short stays"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	b := []byte(`{"token":"sk-live-0123456789"}`)
	if got := string(r.Bytes(b)); got != `{"token":"[redacted]"}` {
		t.Fatalf("bytes: %s", got)
	}
	clean := []byte("nothing here")
	if out := r.Bytes(clean); &out[0] != &clean[0] {
		t.Error("clean input was copied")
	}
	var none *Redactor
	if none.String("sk-live-0123456789") != "sk-live-0123456789" || New().String("x") != "x" {
		t.Error("an empty redactor changed text")
	}
}

func TestReplaceAttrMasksLogValues(t *testing.T) {
	var b strings.Builder
	r := New("tok-0123456789abcdef")
	log := slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: r.ReplaceAttr}))
	log.Info("request", "header", "Bearer tok-0123456789abcdef", "err", errors.New("dial with tok-0123456789abcdef failed"))
	if strings.Contains(b.String(), "tok-0123456789abcdef") || !strings.Contains(b.String(), Mask) {
		t.Fatalf("log line: %s", b.String())
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("prefix SECRETVALUE1 suffix", "SECRETVALUE1")
	f.Add("SECRETSECRETSECRET", "SECRETSECRET")
	f.Fuzz(func(t *testing.T, text, secret string) {
		r := New(secret)
		out := r.String(text)
		s := strings.TrimSpace(secret)
		if len(s) >= minLen && strings.Contains(out, s) && !strings.Contains(Mask, s) {
			t.Fatalf("secret %q survives in %q", s, out)
		}
	})
}
