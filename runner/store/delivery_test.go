package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

// TestIntakeDedupeKeys: a task recorded under several keys is found by any
// of them, also when the intakes race; a lost race writes nothing.
func TestIntakeDedupeKeys(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, store.Config{})
			nt := newTask("ci failed")
			nt.Source = store.SourceWebhook
			first := mustCreate(t, s, nt, "gh:delivery:1")
			// The first call recorded only one key; a task with two keys:
			two, created, err := s.CreateTask(ctx, nt, "gh:delivery:2", "gh:sig:abc")
			if err != nil || !created || two.ID == first.ID {
				t.Fatalf("two keys: %v created=%v", err, created)
			}
			for _, keys := range [][]string{{"gh:delivery:3", "gh:sig:abc"}, {"gh:delivery:2", "gh:sig:new"}} {
				got, created, err := s.CreateTask(ctx, nt, keys...)
				if err != nil || created || got.ID != two.ID {
					t.Fatalf("keys %v: %s created=%v err=%v; want %s", keys, got.ID, created, err, two.ID)
				}
			}
			// Neither duplicate recorded its other key.
			if n := count(t, s, "SELECT COUNT(*) FROM dedupe_keys WHERE dedupe_key IN ('gh:delivery:3', 'gh:sig:new')"); n != 0 {
				t.Fatalf("a duplicate left %d keys behind", n)
			}

			// Racing replays: one signature, a new delivery id each.
			var wg sync.WaitGroup
			ids := make([]string, 8)
			for i := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					task, _, err := s.CreateTask(ctx, nt, fmt.Sprint("gh:delivery:race", i), "gh:sig:race")
					if err != nil {
						t.Error(err)
						return
					}
					ids[i] = task.ID
				}()
			}
			wg.Wait()
			for _, id := range ids {
				if id != ids[0] {
					t.Fatalf("racing replays made several tasks: %v", ids)
				}
			}
			if n := count(t, s, "SELECT COUNT(*) FROM tasks"); n != 3 {
				t.Fatalf("tasks = %d, want 3", n)
			}
		})
	}
}

// TestDeliveries: deliveries are listed newest first, clipped, and the
// history of one webhook is bounded without touching another's.
func TestDeliveries(t *testing.T) {
	for name, open := range storetest.Openers {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, store.Config{})
			if _, err := s.RecordDelivery(ctx, store.Delivery{Webhook: "other", Outcome: store.DeliveryAccepted, Status: 202, TaskID: "t_1"}); err != nil {
				t.Fatal(err)
			}
			for i := range store.DeliveryHistory + 5 {
				if _, err := s.RecordDelivery(ctx, store.Delivery{Webhook: "gh", DeliveryID: fmt.Sprint("d", i),
					Outcome: store.DeliveryRejected, Status: 401, Reason: strings.Repeat("x", 1000)}); err != nil {
					t.Fatal(err)
				}
			}
			list, err := s.Deliveries(ctx, "gh", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != store.DeliveryHistory || list[0].DeliveryID != fmt.Sprint("d", store.DeliveryHistory+4) {
				t.Fatalf("%d deliveries, newest %+v", len(list), list[0])
			}
			if len(list[0].Reason) > 256 || list[0].Status != 401 || list[0].Outcome != store.DeliveryRejected {
				t.Fatalf("delivery = %+v", list[0])
			}
			// Trimming happens every few deliveries, not on each one.
			if n := count(t, s, "SELECT COUNT(*) FROM webhook_deliveries WHERE webhook = 'gh'"); n > store.DeliveryHistory+16 || n < store.DeliveryHistory {
				t.Fatalf("%d rows kept, want %d to %d", n, store.DeliveryHistory, store.DeliveryHistory+16)
			}
			for range 3 * 16 {
				if _, err := s.RecordDelivery(ctx, store.Delivery{Webhook: "gh", Outcome: store.DeliveryIgnored, Status: 204}); err != nil {
					t.Fatal(err)
				}
			}
			if n := count(t, s, "SELECT COUNT(*) FROM webhook_deliveries WHERE webhook = 'gh'"); n > store.DeliveryHistory+16 {
				t.Fatalf("%d rows kept after more deliveries, want at most %d", n, store.DeliveryHistory+16)
			}
			esc, err := s.RecordDelivery(ctx, store.Delivery{Webhook: "esc", DeliveryID: "id\x1b[2J\x00", Event: "push\r\nx", Outcome: store.DeliveryRejected, Status: 401})
			if err != nil || esc.DeliveryID != "id?[2J?" || esc.Event != "push??x" {
				t.Fatalf("control characters kept: %q %q, %v", esc.DeliveryID, esc.Event, err)
			}
			other, err := s.Deliveries(ctx, "other", 5)
			if err != nil || len(other) != 1 || other[0].TaskID != "t_1" {
				t.Fatalf("other = %+v, %v", other, err)
			}
		})
	}
}
