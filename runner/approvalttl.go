package runner

import (
	"strings"
	"time"

	"reasonix/config"
	"reasonix/runner/store"
)

// approvalTTLOf is how long an approval request of task t waits: its
// schedule's or webhook's own approval_ttl (by the requester, which names
// it), else that of the [[bot.routes]] entry of a channel it is relayed
// to, else [runner] approval_ttl.
func (s *Service) approvalTTLOf(t store.Task) time.Duration {
	var d time.Duration
	kind, name, _ := strings.Cut(t.Requester, ":")
	switch kind {
	case "schedule":
		for _, sc := range s.set.Schedules {
			if sc.Name == name {
				d = sc.ApprovalTTL
			}
		}
	case "webhook":
		for _, w := range s.set.Webhooks {
			if w.Name == name {
				d = w.ApprovalTTL
			}
		}
	}
	for _, rt := range s.set.Bot.Routes {
		for _, n := range t.Notify {
			if d == 0 && rt.Transport == n.Transport && rt.Channel == n.Channel {
				d = rt.ApprovalTTL
			}
		}
	}
	if d <= 0 {
		return s.approvalTTL()
	}
	return min(d, config.MaxApprovalTTL)
}
