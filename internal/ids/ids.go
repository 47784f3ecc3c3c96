// Package ids makes the random identifiers the project hands out: short
// hex references a person quotes from an error message, secrets, and the
// time-sortable ids of stored records. One generator, so every id draws
// from crypto/rand the same way.
package ids

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Hex returns n random bytes as 2n lower-case hex characters.
func Hex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// crockford is Crockford's base32 alphabet in lower case: no i, l, o, u, so
// ids survive being read aloud or typed from a phone.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// Sortable returns prefix + 10 characters of millisecond time + 16 random
// characters (80 bits). Ids sort by creation time (to the millisecond), which
// makes them usable as pagination cursors, and never collide in practice.
func Sortable(prefix string, now time.Time) string {
	var b [26]byte
	ms := uint64(now.UnixMilli())
	for i := 9; i >= 0; i-- {
		b[i] = crockford[ms&31]
		ms >>= 5
	}
	var r [16]byte
	_, _ = rand.Read(r[:])
	for i, v := range r {
		b[10+i] = crockford[v&31]
	}
	return prefix + string(b[:])
}
