package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Filter is a condition on a payload: comparisons of a dotted path with a
// literal, joined by &&. For example
//
//	check_run.conclusion == "failure" && repository.fork == false
//
// Paths walk JSON objects by key and arrays by index ("pull_requests.0.number");
// literals are strings in double quotes (Go escapes), numbers, true, false
// and null. A path that does not exist equals nothing, so == is false and
// != is true. That is the whole language: nothing in a filter can call a
// function, loop, or read anything but the payload.
type Filter struct {
	terms []term
}

type term struct {
	path  []string
	neq   bool
	value any // string, float64, bool or nil
}

// Limits of a filter, so a configuration mistake cannot make every
// delivery expensive.
const (
	maxFilterBytes = 4096
	maxFilterTerms = 32
	maxPathParts   = 16
)

// ParseFilter compiles a filter expression; "" is the filter that accepts
// everything. The error names the position of the problem.
func ParseFilter(src string) (*Filter, error) {
	if len(src) > maxFilterBytes {
		return nil, fmt.Errorf("the filter is longer than %d bytes", maxFilterBytes)
	}
	// The configuration is UTF-8; a literal with invalid bytes would print
	// back (as replacement characters) differently from what was parsed.
	if !utf8.ValidString(src) {
		return nil, errors.New("the filter is not valid UTF-8")
	}
	p := filterParser{src: src}
	f := &Filter{}
	p.space()
	if p.done() {
		return f, nil
	}
	for {
		t, err := p.term()
		if err != nil {
			return nil, err
		}
		if len(f.terms) == maxFilterTerms {
			return nil, fmt.Errorf("the filter has more than %d comparisons", maxFilterTerms)
		}
		f.terms = append(f.terms, t)
		p.space()
		if p.done() {
			return f, nil
		}
		if !p.eat("&&") {
			return nil, p.errorf("expected && or the end")
		}
		p.space()
	}
}

// Match reports whether payload (as json.Unmarshal into any decodes it,
// numbers as float64) satisfies every comparison.
func (f *Filter) Match(payload any) bool {
	for _, t := range f.terms {
		v, ok := lookup(payload, t.path)
		if (ok && equal(v, t.value)) == t.neq {
			return false
		}
	}
	return true
}

// String is the filter in canonical form.
func (f *Filter) String() string {
	parts := make([]string, len(f.terms))
	for i, t := range f.terms {
		op := "=="
		if t.neq {
			op = "!="
		}
		lit, _ := json.Marshal(t.value)
		parts[i] = strings.Join(t.path, ".") + " " + op + " " + string(lit)
	}
	return strings.Join(parts, " && ")
}

func lookup(v any, path []string) (any, bool) {
	for _, key := range path {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[key]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// equal compares a payload value with a literal; values of different JSON
// types are never equal (no "1" == 1).
func equal(v, lit any) bool {
	switch l := lit.(type) {
	case nil:
		return v == nil
	case string:
		s, ok := v.(string)
		return ok && s == l
	case float64:
		n, ok := v.(float64)
		return ok && n == l
	case bool:
		b, ok := v.(bool)
		return ok && b == l
	}
	return false
}

type filterParser struct {
	src string
	pos int
}

func (p *filterParser) done() bool { return p.pos >= len(p.src) }

func (p *filterParser) space() {
	for !p.done() && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *filterParser) eat(s string) bool {
	if strings.HasPrefix(p.src[p.pos:], s) {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *filterParser) errorf(format string, args ...any) error {
	return fmt.Errorf("filter: at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func isPathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func (p *filterParser) term() (term, error) {
	var t term
	for {
		start := p.pos
		for !p.done() && isPathByte(p.src[p.pos]) {
			p.pos++
		}
		if p.pos == start {
			return t, p.errorf("expected a path such as check_run.conclusion")
		}
		if len(t.path) == maxPathParts {
			return t, p.errorf("the path has more than %d parts", maxPathParts)
		}
		t.path = append(t.path, p.src[start:p.pos])
		if !p.eat(".") {
			break
		}
	}
	p.space()
	switch {
	case p.eat("=="):
	case p.eat("!="):
		t.neq = true
	default:
		return t, p.errorf("expected == or !=")
	}
	p.space()
	v, err := p.literal()
	if err != nil {
		return t, err
	}
	t.value = v
	return t, nil
}

func (p *filterParser) literal() (any, error) {
	if p.done() {
		return nil, p.errorf("expected a value")
	}
	if p.src[p.pos] == '"' {
		// Find the closing quote, skipping escaped characters; strconv
		// then decides whether the escapes are valid.
		end := p.pos + 1
		for end < len(p.src) && p.src[end] != '"' {
			if p.src[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(p.src) {
			return nil, p.errorf("the string is not closed")
		}
		s, err := strconv.Unquote(p.src[p.pos : end+1])
		if err != nil {
			return nil, p.errorf("the string is not a valid double-quoted string")
		}
		if !utf8.ValidString(s) {
			// A decoded JSON payload holds only valid UTF-8, so such a
			// literal could never match; refusing it also keeps the
			// canonical form (JSON) a faithful copy of the value.
			return nil, p.errorf("the string escapes to bytes that are not UTF-8")
		}
		p.pos = end + 1
		return s, nil
	}
	start := p.pos
	for !p.done() && strings.IndexByte(" \t\r\n&", p.src[p.pos]) < 0 {
		p.pos++
	}
	word := p.src[start:p.pos]
	switch word {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	}
	n, err := strconv.ParseFloat(word, 64)
	if err != nil || strings.ContainsAny(word, "xXpP_") || word == "" {
		p.pos = start
		return nil, p.errorf("expected a \"string\", a number, true, false or null")
	}
	if n != n || n > 1e308 || n < -1e308 { // NaN and infinities are not JSON
		p.pos = start
		return nil, p.errorf("the number is out of range")
	}
	return n, nil
}

var errFiltered = errors.New("the payload does not match the filter")
