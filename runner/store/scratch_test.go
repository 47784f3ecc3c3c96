package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestScratchArchive: a scratch archive is stored byte for byte, replaced
// by a newer one, deleted, and gone with its task — on both databases.
func TestScratchArchive(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, store.Config{})
			task := mustCreate(t, s, newTask("scratch"), "")
			if _, err := s.Scratch(ctx, task.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("Scratch before any = %v", err)
			}
			bin := []byte{0x1f, 0x8b, 0, 1, 2, 0xff, 0xfe, '\'', '\\'}
			if err := s.SaveScratch(ctx, task.ID, "a", bin); err != nil {
				t.Fatal(err)
			}
			newer := bytes.Repeat([]byte{0, 0xff}, 40000)
			if err := s.SaveScratch(ctx, task.ID, "b", newer); err != nil {
				t.Fatal(err)
			}
			got, err := s.Scratch(ctx, task.ID)
			if err != nil || got.Node != "b" || !bytes.Equal(got.Archive, newer) || got.CreatedAt.IsZero() {
				t.Fatalf("Scratch = %s %d bytes %v, %v", got.Node, len(got.Archive), got.CreatedAt, err)
			}
			if err := s.DeleteScratch(ctx, task.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Scratch(ctx, task.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("Scratch after delete = %v", err)
			}
			if err := s.SaveScratch(ctx, "t_missing", "a", bin); err == nil {
				t.Fatal("SaveScratch for a missing task succeeded")
			}
		})
	}
}

// TestScratchRequests: a request is recorded once and listed for its node
// until answered; an answer may come unasked; dropping it removes it; a
// missing task has none — on both databases.
func TestScratchRequests(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, store.Config{})
			task := mustCreate(t, s, newTask("asked"), "")
			other := mustCreate(t, s, newTask("settled"), "")
			if _, err := s.ScratchRequestOf(ctx, task.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("before any request: %v", err)
			}
			askedA, stopA := s.ScratchAsked("a")
			askedB, stopB := s.ScratchAsked("b")
			defer stopA()
			first, err := s.RequestScratch(ctx, task.ID, "a")
			if err != nil || first.Node != "a" || first.RequestedAt.IsZero() || !first.AnsweredAt.IsZero() {
				t.Fatalf("RequestScratch = %+v, %v", first, err)
			}
			select { // signalled before RequestScratch returned
			case <-askedA:
			default:
				t.Fatal("node a's answerer was not told of the request")
			}
			select {
			case <-askedB:
				t.Fatal("node b's answerer was told of a request for a")
			default:
			}
			stopB()
			again, err := s.RequestScratch(ctx, task.ID, "b")
			if err != nil || again != first {
				t.Fatalf("a second request replaced the first: %+v, %v", again, err)
			}
			// A drain that could not move a directory answers unasked.
			if err := s.AnswerScratchRequest(ctx, other.ID, "a"); err != nil {
				t.Fatal(err)
			}
			if ids, err := s.ScratchRequests(ctx, "a"); err != nil || len(ids) != 1 || ids[0] != task.ID {
				t.Fatalf("requests for a = %v, %v; want only the unanswered %s", ids, err, task.ID)
			}
			if ids, _ := s.ScratchRequests(ctx, "b"); len(ids) != 0 {
				t.Fatalf("requests for b = %v", ids)
			}
			if err := s.AnswerScratchRequest(ctx, task.ID, "a"); err != nil {
				t.Fatal(err)
			}
			if got, err := s.ScratchRequestOf(ctx, task.ID); err != nil || got.AnsweredAt.IsZero() || got.RequestedAt != first.RequestedAt {
				t.Fatalf("answered request = %+v, %v", got, err)
			}
			if ids, _ := s.ScratchRequests(ctx, "a"); len(ids) != 0 {
				t.Fatalf("answered requests still listed: %v", ids)
			}
			if err := s.DropScratchRequest(ctx, task.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ScratchRequestOf(ctx, task.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("after the drop: %v", err)
			}
			if _, err := s.RequestScratch(ctx, "t_missing", "a"); err == nil {
				t.Fatal("RequestScratch for a missing task succeeded")
			}
		})
	}
}
