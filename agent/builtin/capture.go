package builtin

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// headTail is an io.Writer that keeps the first and the last bytes of an
// unbounded stream and counts what it dropped in between. A command that
// prints gigabytes costs a fixed amount of memory, and the model still sees
// how the output started (the command, early errors) and how it ended (the
// summary, the final error). Safe for concurrent use.
type headTail struct {
	mu      sync.Mutex
	max     int    // bytes kept at each end
	head    []byte // the first max bytes
	ring    []byte // the last max bytes after head filled, circular
	pos     int    // next write position in ring
	wrapped bool   // ring has been filled at least once
	dropped int64  // bytes that fell out of ring
}

func newHeadTail(max int) *headTail { return &headTail{max: max} }

// Write never fails and never blocks on the size of p.
func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	if room := h.max - len(h.head); room > 0 {
		take := min(room, len(p))
		h.head = append(h.head, p[:take]...)
		p = p[take:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if h.ring == nil {
		h.ring = make([]byte, h.max)
	}
	if len(p) >= h.max {
		// p alone overflows the ring: everything in it and the front of p go.
		h.dropped += int64(h.filled()) + int64(len(p)-h.max)
		copy(h.ring, p[len(p)-h.max:])
		h.pos, h.wrapped = 0, true
		return n, nil
	}
	if over := h.filled() + len(p) - h.max; over > 0 {
		h.dropped += int64(over)
	}
	c := copy(h.ring[h.pos:], p)
	if c < len(p) {
		copy(h.ring, p[c:])
		h.wrapped = true
	}
	h.pos = (h.pos + len(p)) % h.max
	if h.pos == 0 {
		h.wrapped = true
	}
	return n, nil
}

// filled is how many bytes the ring holds.
func (h *headTail) filled() int {
	if h.wrapped {
		return h.max
	}
	return h.pos
}

// parts returns copies of the kept head and tail and the dropped count.
func (h *headTail) parts() (head, tail []byte, dropped int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tail = make([]byte, 0, h.filled())
	if h.wrapped {
		tail = append(tail, h.ring[h.pos:]...)
	}
	tail = append(tail, h.ring[:h.pos]...)
	return append([]byte(nil), h.head...), tail, h.dropped
}

// String renders what was kept, with a marker where bytes were dropped.
func (h *headTail) String() string {
	head, tail, dropped := h.parts()
	if dropped == 0 {
		return string(head) + string(tail)
	}
	// Cut points fall anywhere; do not show half a character on either side.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.FullRune(head[lastRuneStart(head):]); i++ {
		head = head[:lastRuneStart(head)]
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	return fmt.Sprintf("%s\n\n[... %d bytes of output omitted ...]\n\n%s", head, dropped, tail)
}

func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return max(len(b)-1, 0)
}
