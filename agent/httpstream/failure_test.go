package httpstream

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// The cases of the three providers' former parsers, now one.
func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"fractional", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"ms wins", map[string]string{"Retry-After": "3", "Retry-After-Ms": "250"}, 250 * time.Millisecond},
		{"ms alone", map[string]string{"Retry-After-Ms": "1500"}, 1500 * time.Millisecond},
		{"ms zero falls back", map[string]string{"Retry-After": "2", "Retry-After-Ms": "0"}, 2 * time.Second},
		{"ms garbage falls back", map[string]string{"Retry-After": "2", "Retry-After-Ms": "x"}, 2 * time.Second},
		{"ms huge", map[string]string{"Retry-After-Ms": "1e300"}, 24 * time.Hour},
		{"ms infinite ignored", map[string]string{"Retry-After-Ms": "Inf"}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"negative", map[string]string{"Retry-After": "-4"}, 0},
		{"NaN", map[string]string{"Retry-After": "NaN"}, 0},
		{"huge", map[string]string{"Retry-After": "1e300"}, 24 * time.Hour},
		{"spaces", map[string]string{"Retry-After": " 7 "}, 7 * time.Second},
		{"none", nil, 0},
	}
	for _, tt := range tests {
		h := make(http.Header)
		for k, v := range tt.header {
			h.Set(k, v)
		}
		if got := RetryAfter(h, now); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSafeMessage(t *testing.T) {
	const key = "sk-secret-0123456789"
	tests := []struct{ in, want string }{
		{"  plain  ", "plain"},
		{"bad key " + key + " here", "bad key " + Redacted + " here"},
		{"\xff broken", "? broken"},
	}
	for _, tt := range tests {
		if got := SafeMessage(key, tt.in); got != tt.want {
			t.Errorf("SafeMessage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Truncation happens after redaction: no prefix of the key survives.
	long := SafeMessage(key, strings.Repeat("x", 295)+key)
	if strings.Contains(long, key[:6]) || !strings.HasSuffix(long, "…") {
		t.Errorf("truncated message %q", long)
	}
	if got := SafeMessage("", "text "+key); !strings.Contains(got, key) {
		t.Errorf("an empty key must redact nothing: %q", got)
	}
}

// FuzzRetryAfter feeds arbitrary header values: the wait is never negative
// and never more than a day.
func FuzzRetryAfter(f *testing.F) {
	for _, seed := range [][2]string{{"3", ""}, {"", "250"}, {"Wed, 21 Oct 2015 07:28:00 GMT", ""}, {"1e300", "-1"}, {"NaN", "Inf"}} {
		f.Add(seed[0], seed[1])
	}
	now := time.Date(2015, 10, 21, 7, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, secs, ms string) {
		h := http.Header{"Retry-After": {secs}, "Retry-After-Ms": {ms}}
		if d := RetryAfter(h, now); d < 0 || d > 24*time.Hour {
			t.Fatalf("RetryAfter(%q, %q) = %v", secs, ms, d)
		}
	})
}
