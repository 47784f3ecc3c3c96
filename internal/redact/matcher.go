package redact

import "strings"

// matcher replaces values of at least minLen bytes in text as
// strings.Replacer does with the values sorted longest first: left to
// right, without overlaps, the longest value that starts at a position
// wins. With every encoded form there are a dozen values per secret; a bit
// set of the values' first two bytes rejects almost every position of
// ordinary text before any lookup, so the pass costs about one table read
// per byte however many values there are.
type matcher struct {
	first  [1 << 16 / 64]uint64 // bit k: some value starts with the two bytes k
	byHead map[uint64][]string  // a value's first 8 bytes → values, longest first
}

// newMatcher indexes vals, which must be sorted longest first and each
// at least minLen bytes long.
func newMatcher(vals []string) *matcher {
	m := &matcher{byHead: make(map[uint64][]string, len(vals))}
	for _, v := range vals {
		k := pair(v, 0)
		m.first[k>>6] |= 1 << (k & 63)
		h := head(v, 0)
		m.byHead[h] = append(m.byHead[h], v)
	}
	return m
}

func pair(s string, i int) uint16 { return uint16(s[i])<<8 | uint16(s[i+1]) }

func head(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// replace returns s with every value replaced by Mask; s itself when none
// occurs.
func (m *matcher) replace(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+minLen <= len(s); {
		if k := pair(s, i); m.first[k>>6]&(1<<(k&63)) != 0 {
			if v := m.at(s, i); v != "" {
				if b.Len() == 0 {
					b.Grow(len(s))
				}
				b.WriteString(s[last:i])
				b.WriteString(Mask)
				i += len(v)
				last = i
				continue
			}
		}
		i++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// at is the longest value that starts at s[i:], or "".
func (m *matcher) at(s string, i int) string {
	for _, v := range m.byHead[head(s, i)] {
		if strings.HasPrefix(s[i:], v) {
			return v
		}
	}
	return ""
}
