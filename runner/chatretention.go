package runner

import (
	"context"
	"time"
)

// chatEventRetention is how long the chat relay's record of a platform
// delivery (store chat_events: its dedupe and claim) is kept after its
// last mark. The record only has to outlive the platform's redeliveries:
// Slack retries an event for about an hour at most (after seconds, 1 min
// and 5 min), and Telegram fetches again only updates whose offset was
// not confirmed, minutes later. A week is generous on purpose — a node
// down over a weekend that comes back to a stale Telegram offset still
// finds what it handled — while the table stays bounded.
const chatEventRetention = 7 * 24 * time.Hour

// chatEventPruneEvery is how often the leader prunes; the rows age in
// days, so hourly is plenty.
const chatEventPruneEvery = time.Hour

// pruneChatEvents deletes the delivery records older than the retention.
func (s *Service) pruneChatEvents(ctx context.Context) {
	n, err := s.st.PruneChatEvents(ctx, s.now().Add(-chatEventRetention))
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("runner: chat event retention", "err", err)
		}
		return
	}
	if n > 0 {
		s.log.Info("runner: pruned old chat deliveries", "count", n)
	}
}
