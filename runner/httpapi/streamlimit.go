package httpapi

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
)

// DefaultMaxStreamsPerToken is how many event streams one bearer token may
// hold open at once when Config.MaxStreamsPerToken is zero.
const DefaultMaxStreamsPerToken = 64

// streamRetryAfter is the Retry-After (seconds) of a refused stream: slots
// free when a client disconnects, so a short wait is enough.
const streamRetryAfter = "5"

// streamLimiter counts the open event streams per credential. A stream holds
// a goroutine, a connection and a subscription for as long as the client
// likes; without a cap one token (or one buggy client reconnecting in a
// loop) exhausts the service's file descriptors. The key is a hash of the
// presented token, so no secret is kept in memory longer than the request
// and the count survives the token becoming a principal.
type streamLimiter struct {
	max  int
	mu   sync.Mutex
	open map[[sha256.Size]byte]int
}

func newStreamLimiter(max int) *streamLimiter {
	return &streamLimiter{max: max, open: map[[sha256.Size]byte]int{}}
}

// acquire takes a slot for the request's credential; ok is false when the
// credential already holds max streams. Call release exactly once after a
// successful acquire.
func (l *streamLimiter) acquire(r *http.Request) (release func(), ok bool) {
	key := streamKey(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key] >= l.max {
		return nil, false
	}
	l.open[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.open[key]--; l.open[key] <= 0 {
				delete(l.open, key)
			}
		})
	}, true
}

// streamKey is the hash of the bearer token the request presented (auth has
// already accepted it).
func streamKey(r *http.Request) [sha256.Size]byte {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return sha256.Sum256([]byte(strings.TrimSpace(tok)))
}
