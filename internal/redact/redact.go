// Package redact removes known secret values from text before it leaves
// the process: tool results the model reads, stored events, task results
// and log lines. It knows values, not patterns: the caller lists every
// secret it holds (provider keys, API tokens, DSNs, plugin credentials).
//
// Besides the value itself it masks the forms a command could turn it into
// to get it past a literal match: reversed, hex (lower and upper case) and
// base64 (standard and URL alphabets, padded or not), including the part
// of a base64 stream that encodes the secret at any of the three byte
// alignments it can have inside longer encoded data (`cat .env | base64`).
// At most one or two characters at either end of an embedded encoding,
// which also depend on the neighbouring bytes, stay visible.
package redact

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"slices"
	"strings"
)

// Mask replaces every secret value.
const Mask = "[redacted]"

// minLen is the shortest value treated as a secret: shorter ones ("1",
// "true") would mangle ordinary text and are not credentials anyway.
const minLen = 8

// Redactor replaces secret values in text. The zero value and nil redact
// nothing. It is immutable and safe for concurrent use.
type Redactor struct {
	m *matcher
}

// New returns a Redactor for secrets; values shorter than 8 bytes or only
// whitespace are ignored. Longer values are replaced first, so a secret
// that contains another is masked whole.
func New(secrets ...string) *Redactor {
	var vals []string
	add := func(v string) {
		if len(v) >= minLen && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) < minLen {
			continue
		}
		add(s)
		for _, f := range forms(s) {
			add(f)
		}
	}
	if len(vals) == 0 {
		return &Redactor{}
	}
	slices.SortFunc(vals, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return &Redactor{m: newMatcher(vals)}
}

// forms lists what s becomes reversed, hex-encoded and base64-encoded.
func forms(s string) []string {
	b := []byte(s)
	rev := []byte(s)
	slices.Reverse(rev)
	out := []string{string(rev), hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b))}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString(b), enc.WithPadding(base64.NoPadding).EncodeToString(b))
		out = append(out, embedded(enc.WithPadding(base64.NoPadding), b)...)
	}
	return out
}

// embedded lists, for each of the three offsets modulo 3 at which b can
// start inside longer data, the base64 characters that depend on b's bits
// alone: whatever surrounds it, the encoding of the whole holds them.
func embedded(enc *base64.Encoding, b []byte) []string {
	out := make([]string, 0, 3)
	for pad := range 3 {
		data := append(make([]byte, pad, pad+len(b)), b...)
		e := enc.EncodeToString(data)
		// Character i carries bits [6i, 6i+6); b holds bits [8pad, 8pad+8len).
		first := (8*pad + 5) / 6
		end := (8*pad + 8*len(b)) / 6
		if end > len(e) {
			end = len(e)
		}
		if end > first {
			out = append(out, e[first:end])
		}
	}
	return out
}

// String returns s with every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	if r == nil || r.m == nil {
		return s
	}
	return r.m.replace(s)
}

// Bytes is String for a byte slice; it returns b itself when nothing
// matched.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || r.m == nil {
		return b
	}
	s := string(b)
	out := r.m.replace(s)
	if len(out) == len(s) && out == s {
		return b
	}
	return []byte(out)
}

// ReplaceAttr is a slog.HandlerOptions.ReplaceAttr that masks secrets in
// string and error attribute values, so a log line never carries one.
func (r *Redactor) ReplaceAttr(_ []string, a slog.Attr) slog.Attr {
	if r == nil || r.m == nil {
		return a
	}
	switch v := a.Value.Resolve(); v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(r.String(v.String()))
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			a.Value = slog.StringValue(r.String(err.Error()))
		}
	}
	return a
}
