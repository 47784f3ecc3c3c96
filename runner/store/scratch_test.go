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
