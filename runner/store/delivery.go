package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"reasonix/internal/ids"
)

// DeliveryOutcome is what became of one webhook delivery.
type DeliveryOutcome string

// The delivery outcomes.
const (
	DeliveryAccepted  DeliveryOutcome = "accepted"  // a task was created, or tasks waiting for CI woken
	DeliveryDuplicate DeliveryOutcome = "duplicate" // an earlier delivery's task was returned
	DeliveryIgnored   DeliveryOutcome = "ignored"   // ping, or outside the events or filter
	DeliveryRejected  DeliveryOutcome = "rejected"  // bad signature, too large, unusable payload
)

// DeliveryHistory is how many deliveries are kept per webhook: enough to
// see what happened recently, bounded so a flood of forged requests
// cannot grow the database.
const DeliveryHistory = 100

// Delivery is one request to a webhook, as recorded. It never holds the
// body, a signature or a secret.
type Delivery struct {
	ID         string          `json:"id"`
	Webhook    string          `json:"webhook"`               // the [[webhooks]] name
	DeliveryID string          `json:"delivery_id,omitempty"` // the sender's id (X-GitHub-Delivery, webhook-id)
	Event      string          `json:"event,omitempty"`       // e.g. "check_run.completed"
	Outcome    DeliveryOutcome `json:"outcome"`               // accepted, duplicate, ignored or rejected
	Status     int             `json:"status"`                // the HTTP status answered
	Reason     string          `json:"reason,omitempty"`      // why, for rejected and ignored ones
	TaskID     string          `json:"task_id,omitempty"`     // the task started or found
	CreatedAt  time.Time       `json:"created_at"`
}

// Limits of the recorded text: the sender controls these values.
const (
	maxDeliveryID = 128
	maxReason     = 256
)

// clip bounds s to n bytes of valid UTF-8 without control characters, so
// a sender can neither store a megabyte of header in the history nor put
// terminal escapes into `reasonix webhooks list`.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// trimEvery is how many deliveries a Store records between trims of a
// history: trimming on every insert cost as much as the insert, on the
// path of a webhook's acknowledgement.
const trimEvery = 16

// RecordDelivery stores d (ID and CreatedAt are set here). Every
// trimEvery-th call of a Store trims every webhook's history to its newest
// DeliveryHistory entries, so a history holds fewer than
// DeliveryHistory+trimEvery rows per node; Deliveries never lists more
// than DeliveryHistory.
func (s *Store) RecordDelivery(ctx context.Context, d Delivery) (Delivery, error) {
	if d.Webhook == "" || d.Outcome == "" {
		return Delivery{}, invalid("a delivery needs a webhook and an outcome")
	}
	now := s.now()
	d.ID, d.CreatedAt = ids.Sortable("d_", now), fromMicros(micros(now))
	d.DeliveryID, d.Event = clip(d.DeliveryID, maxDeliveryID), clip(d.Event, maxDeliveryID)
	d.Reason = clip(d.Reason, maxReason)
	err := s.inTx(ctx, func(tx txn) error {
		if _, err := tx.exec(ctx, `INSERT INTO webhook_deliveries (id, webhook, delivery_id, event, outcome,
				status, reason, task_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			d.ID, d.Webhook, d.DeliveryID, d.Event, string(d.Outcome), d.Status, d.Reason, d.TaskID, micros(now)); err != nil {
			return fmt.Errorf("store: record delivery: %w", err)
		}
		if s.deliveries.Add(1)%trimEvery != 0 {
			return nil
		}
		// Every webhook's history at once: a webhook that is rarely the
		// one on a trimming call must not grow without bound.
		if _, err := tx.exec(ctx, `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM (SELECT id,
				ROW_NUMBER() OVER (PARTITION BY webhook ORDER BY created_at DESC, id DESC) AS n
				FROM webhook_deliveries) AS ranked WHERE n > ?)`, DeliveryHistory); err != nil {
			return fmt.Errorf("store: trim deliveries: %w", err)
		}
		return nil
	})
	if err != nil {
		return Delivery{}, err
	}
	return d, nil
}

// Deliveries returns webhook's most recent deliveries, newest first (by
// the microsecond: ids order only to the millisecond), at
// most limit (default and maximum DeliveryHistory).
func (s *Store) Deliveries(ctx context.Context, webhook string, limit int) ([]Delivery, error) {
	if limit <= 0 || limit > DeliveryHistory {
		limit = DeliveryHistory
	}
	rs, err := s.db.query(ctx, `SELECT id, webhook, delivery_id, event, outcome, status, reason, task_id, created_at
		FROM webhook_deliveries WHERE webhook = ? ORDER BY created_at DESC, id DESC LIMIT ?`, webhook, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list deliveries: %w", err)
	}
	defer rs.Close()
	var out []Delivery
	for rs.Next() {
		var (
			d       Delivery
			outcome string
			created int64
		)
		if err := rs.Scan(&d.ID, &d.Webhook, &d.DeliveryID, &d.Event, &outcome, &d.Status, &d.Reason, &d.TaskID, &created); err != nil {
			return nil, fmt.Errorf("store: list deliveries: %w", err)
		}
		d.Outcome, d.CreatedAt = DeliveryOutcome(outcome), fromMicros(created)
		out = append(out, d)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: list deliveries: %w", err)
	}
	return out, nil
}
