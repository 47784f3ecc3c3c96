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
// to, else [runner] approval_ttl. config.NoTTL ("none") is no deadline.
func (s *Service) approvalTTLOf(t store.Task) config.TTL {
	var d config.TTL
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
	switch {
	case d.None():
		return d
	case d <= 0:
		return s.approvalTTL()
	}
	return min(d, config.TTL(config.MaxApprovalTTL))
}

// deadlineOf is when an approval request of task t asked now expires;
// none (with a zero time) when it has no deadline.
func (s *Service) deadlineOf(t store.Task) (at time.Time, none bool) {
	ttl := s.approvalTTLOf(t)
	if ttl.None() {
		return time.Time{}, true
	}
	return s.now().Add(ttl.Duration()), false
}

// noDeadlinePark is how long the job of a task waiting for an approval
// without a deadline snoozes: the decision (or a cancel) wakes it, so
// this is only how often a lost wake is made up for.
const noDeadlinePark = 6 * time.Hour

// parkUntil is how long a job waiting for an approval that expires at
// deadline (zero: none) snoozes. The expiry sweep wakes it at the
// deadline; margin covers a sweeper that is down.
func (s *Service) parkUntil(deadline time.Time, margin time.Duration) time.Duration {
	if deadline.IsZero() {
		return noDeadlinePark
	}
	return max(deadline.Sub(s.now()), 0) + margin
}
