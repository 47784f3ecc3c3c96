package webhook_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"reasonix/internal/intakebudget/intakebudgettest"
	"reasonix/runner/store"
)

// garbageRequest is a POST to /hooks/ci of size bytes signed with a
// random, well-formed signature; chunked leaves its length undeclared.
func garbageRequest(size int64, chunked bool, gate chan struct{}) (*http.Request, *intakebudgettest.Upload) {
	r, body := intakebudgettest.Post("/hooks/ci", size, chunked, gate)
	mac := make([]byte, 32)
	_, _ = rand.Read(mac)
	r.Header.Set("X-GitHub-Event", "check_run")
	r.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac))
	return r, body
}

// TestGarbageBurstIsBounded: 40 concurrent garbage-signed 25 MiB POSTs to
// a GitHub webhook, through the mounted handler. One is admitted into the
// intake budget (32 MiB) and read whole, then refused 401; the other 39
// are refused 429 with Retry-After before a byte of theirs is read. While
// the admitted one is still uploading, a signed delivery is accepted. A
// malformed signature is 401 and a chunked upload over half the budget
// 413, neither read further than needed. No moment held more than the
// budget.
func TestGarbageBurstIsBounded(t *testing.T) {
	f := start(t, nil, nil, ciHook())
	api := f.srv.Config.Handler
	const senders, size = 40, 25 << 20
	gate := make(chan struct{})
	refused := make(chan struct{}, senders)
	codes := make([]int, senders)
	reads := make([]int64, senders)
	var wg sync.WaitGroup
	for i := range senders {
		r, body := garbageRequest(size, false, gate)
		r.Header.Set("X-GitHub-Delivery", fmt.Sprint("g-", i))
		wg.Go(func() {
			w := httptest.NewRecorder()
			api.ServeHTTP(w, r)
			codes[i], reads[i] = w.Code, body.BytesRead()
			if w.Code == http.StatusTooManyRequests {
				if w.Header().Get("Retry-After") == "" {
					t.Errorf("sender %d: 429 without Retry-After", i)
				}
				refused <- struct{}{}
			}
		})
	}
	for range senders - 1 {
		<-refused
	}
	// The admitted upload is still waiting at the gate: a signed delivery
	// fits beside it.
	body := checkRun("main", "during", "failure")
	if r := f.post(t, "ci", githubHeaders("check_run", "signed-1", body, ghSecret), body); r.status != http.StatusAccepted {
		t.Fatalf("signed delivery during the burst: %d %v", r.status, r.body)
	}
	close(gate)
	wg.Wait()
	counts := map[int]int{}
	for i, c := range codes {
		counts[c]++
		switch {
		case c == http.StatusTooManyRequests && reads[i] != 0:
			t.Errorf("sender %d was refused 429 after %d bytes were read", i, reads[i])
		case c == http.StatusUnauthorized && reads[i] != size:
			t.Errorf("sender %d was refused 401 after %d bytes", i, reads[i])
		}
	}
	if counts[http.StatusUnauthorized] != 1 || counts[http.StatusTooManyRequests] != senders-1 {
		t.Fatalf("answers %v, want one 401 and %d 429", counts, senders-1)
	}

	malformed, mbody := garbageRequest(size, false, nil)
	malformed.Header.Set("X-Hub-Signature-256", "sha256=zz")
	w := httptest.NewRecorder()
	api.ServeHTTP(w, malformed)
	if w.Code != http.StatusUnauthorized || mbody.BytesRead() != 0 {
		t.Fatalf("malformed signature: %d after %d bytes", w.Code, mbody.BytesRead())
	}
	chunked, cbody := garbageRequest(size, true, nil)
	w = httptest.NewRecorder()
	api.ServeHTTP(w, chunked)
	if w.Code != http.StatusRequestEntityTooLarge || cbody.BytesRead() > 16<<20+1 {
		t.Fatalf("chunked upload of 25 MiB: %d after %d bytes", w.Code, cbody.BytesRead())
	}
	if peak, limit := f.budget.Peak(), f.budget.Limit(); peak > limit || f.budget.InUse() != 0 {
		t.Fatalf("budget peak %d of %d, %d still in use", peak, limit, f.budget.InUse())
	}
	busy := 0
	for _, d := range f.deliveries(t, "ci") {
		if d.Status == http.StatusTooManyRequests && d.Outcome == store.DeliveryRejected {
			busy++
		}
	}
	if busy != senders-1 {
		t.Fatalf("%d deliveries recorded 429, want %d", busy, senders-1)
	}
}
