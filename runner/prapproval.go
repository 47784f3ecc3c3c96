package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"reasonix/runner/internal/publish"
	"reasonix/runner/store"
)

// With [workspaces.publish] mode = "ask", a task's branch is pushed and
// its pull request waits for an approval of tool PRApprovalTool: a person
// decides it through Decide, under the same rule as every approval
// (MayDecide: never the requester while the two-person rule holds, never
// who instructed the task). Allowed, the decision drives the publish at
// once and the request opens; declined or expired, the branch stays
// pushed without one. The approval is bound to the commit: a continued
// task that pushes a new commit asks again.

// PRApprovalTool is the tool name of an "Open pull request" approval.
const PRApprovalTool = "open_pull_request"

// prApprovalHash binds an "Open pull request" approval to the commit.
func prApprovalHash(commit string) string { return PRApprovalTool + ":" + commit }

// prApproval is publish.Target.Approve for task t: it asks on the first
// call and answers from the newest approval for the record's commit.
func (s *Service) prApproval(t store.Task, title, diffStat string) func(context.Context, store.PublishRecord) (publish.Approval, error) {
	return func(ctx context.Context, rec store.PublishRecord) (publish.Approval, error) {
		hash := prApprovalHash(rec.Commit)
		prior, err := s.st.ApprovalsForCall(ctx, t.ID, hash)
		if err != nil {
			return publish.ApprovalPending, err
		}
		if len(prior) > 0 { // newest first
			switch a := prior[0]; {
			case a.State == store.ApprovalPending:
				return publish.ApprovalPending, nil
			case a.State == store.ApprovalAllowed:
				return publish.ApprovalAllowed, nil
			default:
				return publish.ApprovalDenied, nil
			}
		}
		instructors, err := s.instructors(ctx, t)
		if err != nil {
			return publish.ApprovalPending, err
		}
		preview := "Open pull request: " + title + "\n" + rec.Branch + " @ " + short(rec.Commit)
		if diffStat != "" {
			preview += "\n\n" + diffStat
		}
		expires, none := s.deadlineOf(t)
		a, err := s.st.CreateApproval(ctx, store.NewApproval{
			TaskID:      t.ID,
			Instructors: instructors,
			Tool:        PRApprovalTool,
			Subject:     truncate(rec.Branch, maxPreview),
			CallHash:    hash,
			Preview:     s.redact.String(truncate(preview, maxPreview)),
			Requester:   t.Requester,
			Approvers:   t.Approvers,
			ExpiresAt:   expires,
			NoDeadline:  none,
		})
		if err != nil {
			return publish.ApprovalPending, fmt.Errorf("runner: ask to open the pull request of %s: %w", t.ID, err)
		}
		s.metrics.approvals.WithLabelValues("requested").Inc()
		s.emitLogged(ctx, t.ID, "approval_requested", approvalPayload(a, "[workspaces.publish] mode = \"ask\": a person opens the pull request"))
		return publish.ApprovalPending, nil
	}
}

// prDecided drives the publish of the task whose "Open pull request"
// approval a was just decided, so that the request opens (or the branch
// is left alone) now rather than at the next retry.
func (s *Service) prDecided(ctx context.Context, a store.Approval) {
	if a.Tool != PRApprovalTool || !strings.HasPrefix(a.CallHash, PRApprovalTool+":") {
		return
	}
	if err := s.drivePublish(context.WithoutCancel(ctx), a.TaskID); err != nil && !errors.Is(err, store.ErrPublishBusy) {
		s.log.Warn("runner: publishing after the pull request's approval; it is retried", "task", a.TaskID, "err", err)
	}
}
