package webhook

import (
	"context"
	"strings"

	"reasonix/config"
	"reasonix/runner"
)

// CIWaker wakes the tasks waiting for CI on a commit; *runner.Service is
// one. A Handler whose Service is a CIWaker treats a forge's check
// deliveries as wake-ups (see ciCommit) before anything else.
type CIWaker interface {
	WakeCI(ctx context.Context, sha string) (int, error)
}

var _ CIWaker = (*runner.Service)(nil)

// ciCommit is the commit a verified check delivery reports on: GitHub's
// check_suite (check_suite.head_sha), check_run (check_run.head_sha) and
// status (sha); GitLab's pipeline (object_attributes.sha) and job (build:
// sha) events. It is "" for any other delivery, and for a value that is
// not a full commit id (40 or 64 hex digits). The delivery says only that
// something changed: the woken task asks the forge how CI stands.
func ciCommit(kind, event string, payload any) string {
	var path []string
	switch {
	case kind == config.WebhookGitHub && event == "check_suite":
		path = []string{"check_suite", "head_sha"}
	case kind == config.WebhookGitHub && event == "check_run":
		path = []string{"check_run", "head_sha"}
	case kind == config.WebhookGitHub && event == "status":
		path = []string{"sha"}
	case kind == config.WebhookGitLab && event == "pipeline":
		path = []string{"object_attributes", "sha"}
	case kind == config.WebhookGitLab && event == "build":
		path = []string{"sha"}
	default:
		return ""
	}
	v, _ := lookup(payload, path)
	sha, _ := v.(string)
	if !isCommitID(sha) {
		return ""
	}
	return strings.ToLower(sha)
}

// isCommitID reports whether s is a full SHA-1 or SHA-256 commit id.
func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// wakeCI wakes the tasks waiting for CI on the delivery's commit; it
// reports how many it woke (0 without a CIWaker or a check delivery).
func (h *Handler) wakeCI(ctx context.Context, hk *hook, event string, payload any) int {
	w, ok := h.svc.(CIWaker)
	if !ok {
		return 0
	}
	sha := ciCommit(hk.cfg.Kind, event, payload)
	if sha == "" {
		return 0
	}
	n, err := w.WakeCI(ctx, sha)
	if err != nil {
		h.log.Warn("webhook: waking the tasks waiting for CI", "webhook", hk.cfg.Name, "commit", sha, "err", err)
	}
	return n
}
