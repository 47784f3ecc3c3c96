package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// Every whole-secret encoding a command could print is masked.
func TestRedactEncodedForms(t *testing.T) {
	const secret = "sk-live-?>?~0123456789abcdef" // "?>?~" gives + and / in standard base64
	r := New(secret)
	rev := []byte(secret)
	slices.Reverse(rev)
	for name, enc := range map[string]string{
		"base64":            base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64 raw":        base64.RawStdEncoding.EncodeToString([]byte(secret)),
		"base64url":         base64.URLEncoding.EncodeToString([]byte(secret)),
		"base64url raw":     base64.RawURLEncoding.EncodeToString([]byte(secret)),
		"hex":               hex.EncodeToString([]byte(secret)),
		"HEX":               strings.ToUpper(hex.EncodeToString([]byte(secret))),
		"reversed":          string(rev),
		"base64 with a key": base64.StdEncoding.EncodeToString([]byte("OPENAI_API_KEY=" + secret + "\n")),
	} {
		out := r.String("output: " + enc + " end")
		if strings.Contains(out, enc) || !strings.Contains(out, Mask) {
			t.Errorf("%s: %q survives as %q", name, enc, out)
		}
		if leaks(out, secret) {
			t.Errorf("%s: %q still decodes to a part of the secret", name, out)
		}
	}
}

// A secret inside a longer base64 stream is masked at each of the three
// alignments it can have, in both alphabets.
func TestRedactSecretInsideABase64Stream(t *testing.T) {
	const secret = "ghp_0123456789abcdefXYZ"
	r := New(secret)
	for pre := range 6 {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			data := strings.Repeat("x", pre) + "TOKEN=" + secret + "\nmore lines after it\n"
			out := r.String(enc.EncodeToString([]byte(data)))
			if !strings.Contains(out, Mask) || leaks(out, secret) {
				t.Errorf("prefix %d: %q leaks the secret", pre, out)
			}
		}
	}
}

// leaks reports whether any unmasked run of out, read as base64 (either
// alphabet, any offset) or hex, holds four consecutive bytes of secret,
// or whether the secret or its reverse appears as is.
func leaks(out, secret string) bool {
	rev := []byte(secret)
	slices.Reverse(rev)
	if strings.Contains(out, secret) || strings.Contains(out, string(rev)) {
		return true
	}
	var decoded []string
	for _, seg := range strings.Split(out, Mask) {
		for _, field := range strings.FieldsFunc(seg, func(r rune) bool { return r == ' ' || r == '\n' || r == ':' }) {
			for shift := range 4 {
				if shift > len(field) {
					break
				}
				s := strings.TrimRight(field[shift:], "=")
				s = s[:len(s)/4*4]
				for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
					if b, err := enc.DecodeString(s); err == nil {
						decoded = append(decoded, string(b))
					}
				}
			}
			if b, err := hex.DecodeString(field[:len(field)/2*2]); err == nil {
				decoded = append(decoded, string(b))
			}
		}
	}
	for _, d := range decoded {
		for i := 0; i+4 <= len(secret); i++ {
			if strings.Contains(d, secret[i:i+4]) {
				return true
			}
		}
	}
	return false
}

func FuzzRedactBase64(f *testing.F) {
	f.Add([]byte("A="), "sk-0123456789", []byte("\n"), false)
	f.Add([]byte{}, "xoxb-12345-67890-abcdef", []byte("tail"), true)
	f.Fuzz(func(t *testing.T, prefix []byte, secret string, suffix []byte, url bool) {
		if len(secret) < minLen || strings.TrimSpace(secret) != secret || strings.Contains(Mask, secret) {
			return
		}
		enc := base64.StdEncoding
		if url {
			enc = base64.URLEncoding
		}
		text := enc.EncodeToString(slices.Concat(prefix, []byte(secret), suffix))
		out := New(secret).String(text)
		// The part of the stream that carries the secret's bits alone is
		// gone: cutting out every masked run, at most the characters at
		// its edges (under 8 bits of the secret each) remain.
		core := embedded(enc.WithPadding(0), []byte(secret))[len(prefix)%3]
		if strings.Contains(out, core) {
			t.Fatalf("the encoded secret %q survives in %q", core, out)
		}
	})
}

// replacer is the redactor as it was before the encoded forms: a
// strings.Replacer over the literal values, longest first. The benchmark
// compares against it and the fuzz target checks the matcher agrees with
// it on the same values.
func replacer(vals []string) *strings.Replacer {
	vals = slices.Clone(vals)
	slices.SortFunc(vals, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, v := range vals {
		pairs = append(pairs, v, Mask)
	}
	return strings.NewReplacer(pairs...)
}

// The matcher replaces exactly what strings.Replacer would, given the same
// values longest first.
func FuzzMatcherAgreesWithReplacer(f *testing.F) {
	f.Add("abcdefgh abcdefghij xx abcdefgh", "abcdefgh", "abcdefghij", "cdefghijkl")
	f.Add("aaaaaaaaaaaaaaaaaaaaa", "aaaaaaaa", "aaaaaaaaaa", "baaaaaaaa")
	f.Fuzz(func(t *testing.T, text, a, b, c string) {
		var vals []string
		for _, v := range []string{a, b, c} {
			if len(v) >= minLen && !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			return
		}
		sorted := slices.Clone(vals)
		slices.SortStableFunc(sorted, func(a, b string) int { return len(b) - len(a) })
		if got, want := newMatcher(sorted).replace(text), replacer(vals).Replace(text); got != want {
			t.Fatalf("matcher %q, replacer %q", got, want)
		}
	})
}

// BenchmarkRedact64KiB masks 10 secrets in 64 KiB of tool output that
// holds a few of them, with the redactor as it was (literal values, a
// strings.Replacer) and as it is (every encoded form, the matcher).
func BenchmarkRedact64KiB(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var secrets []string
	for i := range 10 {
		secrets = append(secrets, fmt.Sprintf("sk-%d-%016x%016x", i, rng.Uint64(), rng.Uint64()))
	}
	var sb strings.Builder
	for i := 0; sb.Len() < 64<<10; i++ {
		fmt.Fprintf(&sb, "=== RUN   TestSomething/%d\n    file_%d.go:%d: got 0x%08x, want something else entirely\n", i, i%7, i*3, rng.Uint32())
		if i%200 == 0 {
			sb.WriteString("env: TOKEN=" + secrets[i%10] + "\n")
		}
	}
	text := sb.String()[:64<<10]
	literal, encoded := replacer(secrets), New(secrets...)
	// Both variants run in each iteration, so a busy machine slows both
	// alike; the metrics are the time of one pass of each.
	var lit, enc time.Duration
	for b.Loop() {
		t0 := time.Now()
		a := literal.Replace(text)
		t1 := time.Now()
		c := encoded.String(text)
		lit, enc = lit+t1.Sub(t0), enc+time.Since(t1)
		if len(a) == len(text) || len(c) == len(text) {
			b.Fatal("nothing was masked")
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(lit.Nanoseconds())/n/1000, "before-µs/op")
	b.ReportMetric(float64(enc.Nanoseconds())/n/1000, "after-µs/op")
}
