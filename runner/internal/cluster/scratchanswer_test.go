package cluster

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// askedStore counts the answerer's reads of the requests addressed to it
// and lets the test signal a request made in this process.
type askedStore struct {
	ScratchStore // nil: the answerer calls nothing else without a request
	reads        atomic.Int64
	asked        chan struct{}
}

func (s *askedStore) ScratchRequests(context.Context, string) ([]string, error) {
	s.reads.Add(1)
	return nil, nil
}

func (s *askedStore) ScratchAsked(string) (<-chan struct{}, func()) { return s.asked, func() {} }

// TestAnswerWaitsAlone: a node alone reads the scratch requests once at
// start and then only when this process asks; with another node alive it
// looks every Interval, and stops looking when it is alone again.
func TestAnswerWaitsAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &askedStore{asked: make(chan struct{}, 1)}
		const interval = time.Second
		s := NewScratch(ScratchConfig{Store: st, Node: "a", Interval: interval})
		s.Others(0)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.Answer(ctx) }()
		synctest.Wait()
		if n := st.reads.Load(); n != 1 {
			t.Fatalf("%d reads at start, want 1", n)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := st.reads.Load(); n != 1 {
			t.Fatalf("alone for an hour: %d reads, want still 1", n)
		}
		st.asked <- struct{}{}
		synctest.Wait()
		if n := st.reads.Load(); n != 2 {
			t.Fatalf("after a request here: %d reads, want 2", n)
		}
		s.Others(1) // another node joined: it may ask from elsewhere
		synctest.Wait()
		if n := st.reads.Load(); n != 3 {
			t.Fatalf("after a node joined: %d reads, want 3", n)
		}
		time.Sleep(10*interval + interval/2)
		synctest.Wait()
		if n := st.reads.Load(); n != 13 {
			t.Fatalf("10 intervals with another node: %d reads, want 13", n)
		}
		s.Others(0)
		time.Sleep(interval) // the read already due, then no more
		synctest.Wait()
		before := st.reads.Load()
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := st.reads.Load(); n != before {
			t.Fatalf("alone again: %d reads in an hour", n-before)
		}
		cancel()
		<-done
	})
}
