package intakebudget_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"reasonix/internal/intakebudget"
	"reasonix/internal/intakebudget/intakebudgettest"
)

// request is a POST of a body of size bytes; known says whether it
// declares its Content-Length (else it is chunked).
func request(size int64, known bool, gate chan struct{}) (*http.Request, *intakebudgettest.Upload) {
	return intakebudgettest.Post("/", size, !known, gate)
}

// TestReadHashesWhatItBuffers: the body is read whole, of a declared or an
// unknown length, and the sink sees exactly its bytes; releasing it gives
// its bytes back.
func TestReadHashesWhatItBuffers(t *testing.T) {
	b := intakebudget.New(8 << 20)
	for _, size := range []int64{0, 1, 64 << 10, 3<<20 + 7} {
		for _, known := range []bool{true, false} {
			r, _ := request(size, known, nil)
			h := sha256.New()
			body, err := b.Read(r, 4<<20, h)
			if err != nil {
				t.Fatalf("%d bytes (length known %v): %v", size, known, err)
			}
			want := intakebudgettest.Content(size)
			if !bytes.Equal(body.Bytes(), want) || !bytes.Equal(h.Sum(nil), sum(want)) {
				t.Fatalf("%d bytes (length known %v): the body or its hash differ", size, known)
			}
			if b.InUse() == 0 && size > 0 {
				t.Fatalf("%d bytes held without a reservation", size)
			}
			body.Release()
			body.Release()
			if b.InUse() != 0 {
				t.Fatalf("%d bytes still held after Release", b.InUse())
			}
		}
	}
}

func sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// TestReadRefusesBeforeReading: a declared length over the limit is 413
// and one that does not fit beside the bodies held is 429, neither having
// read a byte; a limit larger than the budget is the budget.
func TestReadRefusesBeforeReading(t *testing.T) {
	b := intakebudget.New(4 << 20)
	r, src := request(2<<20+1, true, nil)
	var tl *intakebudget.TooLargeError
	if _, err := b.Read(r, 2<<20, nil); !errors.As(err, &tl) || tl.Limit != 2<<20 || intakebudget.Status(err) != http.StatusRequestEntityTooLarge || src.BytesRead() != 0 {
		t.Fatalf("over the limit: %v, read %d", err, src.BytesRead())
	}
	r, src = request(25<<20, true, nil)
	if _, err := b.Read(r, 25<<20, nil); !errors.As(err, &tl) || tl.Limit != 4<<20 || src.BytesRead() != 0 {
		t.Fatalf("over the budget: %v, read %d", err, src.BytesRead())
	}
	held, _ := request(3<<20, true, nil)
	body, err := b.Read(held, 4<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, src = request(2<<20, true, nil)
	if _, err := b.Read(r, 4<<20, nil); !errors.Is(err, intakebudget.ErrBusy) || intakebudget.Status(err) != http.StatusTooManyRequests || src.BytesRead() != 0 {
		t.Fatalf("beside a held body: %v, read %d", err, src.BytesRead())
	}
	body.Release()
	r, _ = request(2<<20, true, nil)
	if body, err = b.Read(r, 4<<20, nil); err != nil {
		t.Fatalf("after the release: %v", err)
	}
	body.Release()
}

// TestChunkedBodyIsBounded: a body of unknown length is refused once it
// passes the limit, having read one byte past it at most, or once it
// finds the budget spent; either way it holds nothing after.
func TestChunkedBodyIsBounded(t *testing.T) {
	b := intakebudget.New(8 << 20)
	r, src := request(25<<20, false, nil)
	var tl *intakebudget.TooLargeError
	if _, err := b.Read(r, 1<<20, nil); !errors.As(err, &tl) || src.BytesRead() > 1<<20+1 {
		t.Fatalf("over the limit: %v, read %d", err, src.BytesRead())
	}
	r, _ = request(1<<20, false, nil)
	body, err := b.Read(r, 1<<20, nil)
	if err != nil || len(body.Bytes()) != 1<<20 {
		t.Fatalf("exactly the limit: %v", err)
	}
	body.Release()

	held, _ := request(6<<20, true, nil)
	hold, err := b.Read(held, 8<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, src = request(7<<20, false, nil)
	if _, err := b.Read(r, 8<<20, nil); !errors.Is(err, intakebudget.ErrBusy) || src.BytesRead() > 2<<20 {
		t.Fatalf("the budget spent midway: %v, read %d", err, src.BytesRead())
	}
	if b.InUse() != 6<<20 {
		t.Fatalf("in use %d, want only the held body's", b.InUse())
	}
	hold.Release()
	if b.InUse() != 0 || b.Peak() > b.Limit() {
		t.Fatalf("in use %d, peak %d", b.InUse(), b.Peak())
	}
}

// TestConcurrentBodiesShareTheBudget: 40 senders of 1 MiB at once on a
// budget of 4 MiB: four are read, the other 36 are refused at once
// without a byte read; the budget is never exceeded.
func TestConcurrentBodiesShareTheBudget(t *testing.T) {
	b := intakebudget.New(4 << 20)
	gate := make(chan struct{})
	var wg sync.WaitGroup
	var read, busy atomic.Int64
	refused := make(chan struct{}, 40)
	for range 40 {
		r, src := request(1<<20, true, gate)
		wg.Go(func() {
			body, err := b.Read(r, 1<<20, nil)
			switch {
			case errors.Is(err, intakebudget.ErrBusy):
				if src.BytesRead() != 0 {
					t.Errorf("a refused body was read: %d bytes", src.BytesRead())
				}
				busy.Add(1)
				refused <- struct{}{}
			case err != nil:
				t.Error(err)
			default:
				read.Add(1)
				body.Release()
			}
		})
	}
	// The four admitted senders wait at the gate until the other 36 have
	// been refused, so all 40 overlap.
	for range 36 {
		<-refused
	}
	close(gate)
	wg.Wait()
	if read.Load() != 4 || busy.Load() != 36 || b.Peak() != 4<<20 || b.InUse() != 0 {
		t.Fatalf("read %d, refused %d, peak %d, in use %d", read.Load(), busy.Load(), b.Peak(), b.InUse())
	}
}

// TestLargeBuffersAreReused: a stream of large bodies read one after
// another makes next to no garbage: the buffer of one is the next one's.
// Without the reuse, 20 bodies of 25 MiB allocate 500 MiB; 20 of 8 MiB
// and unknown length, 320 MiB.
func TestLargeBuffersAreReused(t *testing.T) {
	b := intakebudget.New(32 << 20)
	for _, tc := range []struct {
		size  int64
		known bool
		most  uint64 // bytes allocated for 20 bodies
	}{
		{25 << 20, true, 1 << 20},
		// Below 1 MiB its buffers are the garbage collector's.
		{8 << 20, false, 32 << 20},
	} {
		read := func() {
			r, _ := request(tc.size, tc.known, nil)
			body, err := b.Read(r, 25<<20, nil)
			if err != nil {
				t.Fatal(err)
			}
			body.Release()
		}
		read()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 20 {
			read()
		}
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > tc.most {
			t.Fatalf("20 bodies of %d MiB (length known %v) allocated %d MiB", tc.size>>20, tc.known, got>>20)
		}
	}
}

// TestChunkedLimitIsHalfTheBudget: a body of unknown length over half the
// budget is too large, never busy: waiting would not help it.
func TestChunkedLimitIsHalfTheBudget(t *testing.T) {
	b := intakebudget.New(8 << 20)
	r, _ := request(4<<20+1, false, nil)
	var tl *intakebudget.TooLargeError
	if _, err := b.Read(r, 25<<20, nil); !errors.As(err, &tl) || tl.Limit != 4<<20 {
		t.Fatalf("over half the budget: %v", err)
	}
	r, _ = request(4<<20, false, nil)
	body, err := b.Read(r, 25<<20, nil)
	if err != nil {
		t.Fatalf("half the budget: %v", err)
	}
	body.Release()
}

// TestKeptBuffersGiveWay: a kept buffer counts against the budget, and is
// let go when a body of another size needs its room.
func TestKeptBuffersGiveWay(t *testing.T) {
	b := intakebudget.New(32 << 20)
	read := func(size int64) *intakebudget.Body {
		r, _ := request(size, true, nil)
		body, err := b.Read(r, 25<<20, nil)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		return body
	}
	read(25 << 20).Release()
	if b.InUse() != 0 || b.Held() != 25<<20 {
		t.Fatalf("after a 25 MiB body: in use %d, held %d", b.InUse(), b.Held())
	}
	body := read(8 << 20)
	if b.InUse() != 8<<20 || b.Held() != 8<<20 {
		t.Fatalf("with an 8 MiB body: in use %d, held %d; the kept 25 MiB should have given way", b.InUse(), b.Held())
	}
	body.Release()
	if b.Held() > b.Limit() {
		t.Fatalf("held %d of %d", b.Held(), b.Limit())
	}
}
