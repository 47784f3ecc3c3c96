package agenttest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Reply is one scripted HTTP response of a ReplayServer, bytes as given:
// for a provider package's own tests of its wire, where Server's turns
// would hide the details under test.
type Reply struct {
	Status int
	Header map[string]string
	Body   string
}

// Recorded is a 200 event-stream Reply whose body is the file
// testdata/name of the calling test's package.
func Recorded(t testing.TB, name string) Reply {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return Reply{Status: 200, Header: map[string]string{"Content-Type": "text/event-stream"}, Body: string(b)}
}

// ReplayServer serves scripted Replies in order on loopback and records
// what it was sent. An event-stream body is written one event at a time
// with a flush, as real APIs stream them. Once the script runs out it
// repeats the last reply. It is safe for concurrent requests.
type ReplayServer struct {
	*httptest.Server
	mu      sync.Mutex
	replies []Reply
	bodies  []string
	headers []http.Header
}

// NewReplayServer starts a ReplayServer playing replies (at least one) and
// closes it when t ends.
func NewReplayServer(t testing.TB, replies ...Reply) *ReplayServer {
	f := &ReplayServer{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *ReplayServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(body))
	f.headers = append(f.headers, r.Header.Clone())
	rep := f.replies[min(len(f.bodies), len(f.replies))-1]
	f.mu.Unlock()
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.Status)
	flusher, _ := w.(http.Flusher)
	for _, ev := range strings.SplitAfter(rep.Body, "\n\n") {
		io.WriteString(w, ev)
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// Received reports how many requests arrived so far.
func (f *ReplayServer) Received() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// Bodies returns the request bodies received so far, in arrival order.
func (f *ReplayServer) Bodies() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.bodies)
}

// Headers returns the request headers received so far, in arrival order.
func (f *ReplayServer) Headers() []http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.headers)
}

// StallingServer starts a loopback server that answers every request with
// nothing until the client leaves: with headers, it first sends an
// event-stream header and first (when not empty). It counts the requests,
// and closes when t ends.
func StallingServer(t testing.TB, headers bool, first string) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		// Reading the body to its end lets the server notice the client leaving.
		io.Copy(io.Discard, r.Body)
		if headers {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(first))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}
