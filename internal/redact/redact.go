// Package redact removes known secret values from text before it leaves
// the process: tool results the model reads, stored events, task results
// and log lines. It knows values, not patterns: the caller lists every
// secret it holds (provider keys, API tokens, DSNs, plugin credentials).
package redact

import (
	"cmp"
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
	r *strings.Replacer
}

// New returns a Redactor for secrets; values shorter than 8 bytes or only
// whitespace are ignored. Longer values are replaced first, so a secret
// that contains another is masked whole.
func New(secrets ...string) *Redactor {
	var vals []string
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) >= minLen && !slices.Contains(vals, s) {
			vals = append(vals, s)
		}
	}
	if len(vals) == 0 {
		return &Redactor{}
	}
	slices.SortFunc(vals, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, Mask)
	}
	return &Redactor{r: strings.NewReplacer(pairs...)}
}

// String returns s with every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// Bytes is String for a byte slice; it returns b itself when nothing
// matched.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || r.r == nil {
		return b
	}
	s := r.r.Replace(string(b))
	if s == string(b) {
		return b
	}
	return []byte(s)
}

// ReplaceAttr is a slog.HandlerOptions.ReplaceAttr that masks secrets in
// string and error attribute values, so a log line never carries one.
func (r *Redactor) ReplaceAttr(_ []string, a slog.Attr) slog.Attr {
	if r == nil || r.r == nil {
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
