package forgetest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// HoldAt is where a held request waits: before the server acts on it, or
// after it acted (its effect is in place) but before the client hears.
type HoldAt int

// The places of a Hold.
const (
	Before HoldAt = iota
	After
)

// Hold is one request a Server or GitServer keeps waiting, so that a test
// can stop the client (kill -9 the process that sent it) at a known point
// of its work, with no hook in the client. Its methods are safe for
// concurrent use.
type Hold struct {
	match   func(*http.Request) bool
	at      HoldAt
	reached chan struct{}
	release chan bool
	once    sync.Once
}

// Reached is closed once the held request arrived (Before) or was served
// (After) and waits.
func (h *Hold) Reached() <-chan struct{} { return h.reached }

// Release lets the held request go on: pass answers it as the server
// would (Before: serves it first); otherwise it gets a 503 (After: the
// effect stays, the client never learns of it). Only the first call
// counts; the test's end releases with pass false.
func (h *Hold) Release(pass bool) {
	h.once.Do(func() { h.release <- pass })
}

// holds are the Holds of one server, each taken by the first request that
// matches it.
type holds struct {
	mu   sync.Mutex
	list []*Hold
}

func (hs *holds) add(t testing.TB, match func(*http.Request) bool, at HoldAt) *Hold {
	h := &Hold{match: match, at: at, reached: make(chan struct{}), release: make(chan bool, 1)}
	hs.mu.Lock()
	hs.list = append(hs.list, h)
	hs.mu.Unlock()
	t.Cleanup(func() { h.Release(false) })
	return h
}

// take removes and returns the first Hold r matches, or nil.
func (hs *holds) take(r *http.Request) *Hold {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for i, h := range hs.list {
		if h.match(r) {
			hs.list = append(hs.list[:i], hs.list[i+1:]...)
			return h
		}
	}
	return nil
}

// serve passes r to next, held where a matching Hold says.
func (hs *holds) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	h := hs.take(r)
	if h == nil {
		next.ServeHTTP(w, r)
		return
	}
	var served *httptest.ResponseRecorder
	if h.at == After {
		served = httptest.NewRecorder()
		next.ServeHTTP(served, r)
	}
	close(h.reached)
	pass := false
	select {
	case pass = <-h.release:
	case <-r.Context().Done(): // the client is gone
	}
	switch {
	case !pass:
		http.Error(w, "held by the test", http.StatusServiceUnavailable)
	case served != nil:
		for k, v := range served.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(served.Code)
		_, _ = w.Write(served.Body.Bytes())
	default:
		next.ServeHTTP(w, r)
	}
}

// Hold makes the next request match reports true for wait at at until
// the Hold is released, or its client goes away.
func (s *Server) Hold(t testing.TB, match func(*http.Request) bool, at HoldAt) *Hold {
	return s.holds.add(t, match, at)
}

// Hold makes the next request match reports true for wait at at until
// the Hold is released, or its client goes away. A git client whose
// parent was killed may outlive it: release with pass false, and it
// fails.
func (g *GitServer) Hold(t testing.TB, match func(*http.Request) bool, at HoldAt) *Hold {
	return g.holds.add(t, match, at)
}
