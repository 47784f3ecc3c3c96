// Package intakebudget bounds the memory that request bodies from senders
// not yet authenticated may hold at once. A webhook, Slack's Events API or
// Telegram's webhook can only verify a signature over the whole body, so
// the body must be read before anything proves who sent it; without a
// bound, a few dozen concurrent garbage-signed uploads of the largest
// allowed size hold gigabytes. Every such intake of the service reads its
// body through one shared Budget: a body reserves its bytes before they
// are read, and a request that finds the budget spent is refused at once,
// without reading its body, so that the sender retries later.
package intakebudget

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
)

// DefaultBytes is the budget of New(0): one GitHub payload at its 25 MiB
// maximum plus room for the small deliveries that arrive meanwhile, and
// far below what would make the service's memory a concern.
const DefaultBytes = 32 << 20

// RetryAfter is the Retry-After value (seconds) of a request refused for
// want of budget: long enough for the bodies in flight to be read on an
// ordinary link, short enough that a platform's retry arrives soon.
const RetryAfter = "5"

// chunk is the first buffer of a body of unknown length, which doubles as
// it fills.
const chunk = 64 << 10

// poolMin is the smallest buffer kept for reuse, and the granularity of
// the sizes of those kept: smaller ones are cheap for the garbage
// collector. Reusing the large ones is what keeps the process's memory
// near its idle size plus the budget under a stream of large bodies:
// otherwise each body's buffer is garbage until the next collection, and
// the heap grows to twice the budget and more before one comes.
const poolMin = 1 << 20

// ErrBusy is the refusal of a body that does not fit the budget's free
// bytes now; answer 429 with Retry-After.
var ErrBusy = errors.New("the service is receiving too much at once; retry later")

// ErrRead is a body that could not be read (the sender went away or sent
// a malformed chunk); answer 400.
var ErrRead = errors.New("the body could not be read")

// TooLargeError refuses a body over its limit; answer 413. Limit is the
// limit applied: the endpoint's, or the whole budget when that is smaller,
// since a body larger than the budget could never be taken.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string { return fmt.Sprintf("the body exceeds %d bytes", e.Limit) }

// Status is the HTTP status that answers an error of Read: 413, 429 or 400.
func Status(err error) int {
	var tl *TooLargeError
	switch {
	case errors.As(err, &tl):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrBusy):
		return http.StatusTooManyRequests
	}
	return http.StatusBadRequest
}

// Refuse answers an error of Read in plain text: its status (Status),
// with Retry-After when the budget was spent.
func Refuse(w http.ResponseWriter, err error) {
	if errors.Is(err, ErrBusy) {
		w.Header().Set("Retry-After", RetryAfter)
	}
	http.Error(w, err.Error(), Status(err))
}

// Budget is a count of bytes that bodies being read or handled may hold.
// It keeps the buffers of large bodies that were released for the next
// ones, within the same count: what bodies hold and what it keeps never
// exceed its limit together. It is safe for concurrent use.
type Budget struct {
	mu     sync.Mutex
	limit  int64
	used   int64 // held by bodies
	peak   int64
	free   [][]byte // released buffers of poolMin bytes and more, each of a multiple of poolMin
	pooled int64    // the bytes in free
}

// New returns a budget of limit bytes; limit <= 0 means DefaultBytes.
func New(limit int64) *Budget {
	if limit <= 0 {
		limit = DefaultBytes
	}
	return &Budget{limit: limit}
}

// Limit is the budget's size in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// InUse is how many bytes bodies hold now.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Held is InUse plus the bytes of the buffers kept for reuse; it never
// exceeds Limit.
func (b *Budget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used + b.pooled
}

// Peak is the most bytes bodies have held at once since New.
func (b *Budget) Peak() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// acquire reserves a buffer of n bytes: one kept from an earlier body
// when one of the right size is, else a new one, evicting kept buffers
// to make room for it. ok is false when n does not fit beside what bodies
// hold now.
func (b *Budget) acquire(n int64) (buf []byte, ok bool) {
	size := n
	if n >= poolMin {
		size = (n + poolMin - 1) / poolMin * poolMin
	}
	b.mu.Lock()
	if n > b.limit-b.used {
		b.mu.Unlock()
		return nil, false
	}
	size = min(size, b.limit-b.used)
	b.used += size
	b.peak = max(b.peak, b.used)
	for i, f := range b.free {
		if int64(cap(f)) == size {
			// Delete clears the vacated slot, so the list holds no buffer
			// it no longer counts.
			b.free = slices.Delete(b.free, i, i+1)
			b.pooled -= size
			b.mu.Unlock()
			return f[:n], true
		}
	}
	for b.used+b.pooled > b.limit {
		last := len(b.free) - 1
		b.pooled -= int64(cap(b.free[last]))
		b.free[last] = nil // for the collector
		b.free = b.free[:last]
	}
	b.mu.Unlock()
	return make([]byte, n, size), true
}

// giveBack returns a buffer acquire made; one of poolMin bytes or more is
// kept for reuse.
func (b *Budget) giveBack(buf []byte) {
	size := int64(cap(buf))
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= size
	if size >= poolMin && size%poolMin == 0 {
		b.free = append(b.free, buf[:0])
		b.pooled += size
	}
}

// Body is a request body read within the budget. It holds its bytes'
// reservation until Release.
type Body struct {
	budget *Budget
	buf    []byte
}

// Bytes is the body. It must not be used after Release: its buffer is
// reused for another body.
func (body *Body) Bytes() []byte { return body.buf }

// Release returns the body's bytes to the budget; a second call does
// nothing. Call it once the body (not what was parsed from it) is no
// longer needed.
func (body *Body) Release() {
	if body == nil || body.budget == nil {
		return
	}
	body.budget.giveBack(body.buf)
	body.budget, body.buf = nil, nil
}

// Read reads r's body, at most limit bytes, writing every byte to sink as
// well as it arrives (a hash that verifies the body's signature: nil for
// none), so the body is verified in the same pass that buffers it.
//
// A body whose Content-Length is over the limit is refused before any of
// it is read (*TooLargeError); one whose Content-Length does not fit the
// budget's free bytes likewise (ErrBusy). A body of unknown length
// (chunked) reserves as it grows and is refused as soon as it passes the
// limit or finds the budget spent, having read no more than it holds.
// Its buffer is copied as it grows, the old beside the new, so its limit
// is at most half the budget: a larger one could never be taken. Read
// does not close r.Body.
func (b *Budget) Read(r *http.Request, limit int64, sink io.Writer) (*Body, error) {
	limit = min(limit, b.limit)
	if r.Body == nil || r.Body == http.NoBody {
		return &Body{}, nil
	}
	var src io.Reader = r.Body
	if sink != nil {
		src = io.TeeReader(src, sink)
	}
	if n := r.ContentLength; n >= 0 {
		return b.readKnown(src, n, limit)
	}
	return b.readChunked(src, min(limit, b.limit/2))
}

// readKnown reads a body of n bytes, as its Content-Length says; the
// server's body reader ends it there.
func (b *Budget) readKnown(src io.Reader, n, limit int64) (*Body, error) {
	if n > limit {
		return nil, &TooLargeError{limit}
	}
	buf, ok := b.acquire(n)
	if !ok {
		return nil, ErrBusy
	}
	body := &Body{budget: b, buf: buf}
	if _, err := io.ReadFull(src, body.buf); err != nil {
		body.Release()
		return nil, ErrRead
	}
	return body, nil
}

// readChunked reads a body of unknown length into a buffer that doubles
// as it fills, each larger buffer acquired from the budget before it is
// made.
func (b *Budget) readChunked(src io.Reader, limit int64) (*Body, error) {
	body := &Body{budget: b}
	fail := func(err error) (*Body, error) {
		body.Release()
		return nil, err
	}
	for {
		buf := body.buf
		// A kept buffer may be larger than the limit: read no further.
		room := min(int64(cap(buf)), limit)
		if int64(len(buf)) == room {
			if room == limit {
				// Full at the limit: one more byte means too large.
				var probe [1]byte
				n, err := io.ReadFull(src, probe[:])
				if n > 0 {
					return fail(&TooLargeError{limit})
				}
				if err != io.EOF {
					return fail(ErrRead)
				}
				return body, nil
			}
			next, ok := b.acquire(min(max(2*int64(cap(buf)), chunk), limit))
			if !ok {
				return fail(ErrBusy)
			}
			next = next[:copy(next[:cap(next)], buf)]
			if body.buf != nil {
				b.giveBack(body.buf)
			}
			body.buf, buf = next, next
			room = min(int64(cap(buf)), limit)
		}
		n, err := src.Read(buf[len(buf):room])
		body.buf = buf[:len(buf)+n]
		if err == io.EOF {
			return body, nil
		}
		if err != nil {
			return fail(ErrRead)
		}
	}
}
