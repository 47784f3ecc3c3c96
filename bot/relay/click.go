package relay

import (
	"context"
	"errors"

	"reasonix/bot"
	"reasonix/runner"
)

// HandleClick decides an approval from a button. The button only names the
// approval and the choice; every right to decide is checked here, against
// the server's records: the approval exists and was posted in exactly this
// message, the clicker is a configured approver, and the runner (which
// also refuses the requester, a decided or an expired approval) accepts
// the decision. Whatever is refused changes nothing and is answered to the
// clicker alone.
func (r *Relay) HandleClick(ctx context.Context, c bot.Click) string {
	r.learn(c.Requester(), c.Name)
	if taskID, err := bot.ParseCancelButton(c.Data); err == nil {
		return r.cancelClick(ctx, c, taskID)
	}
	id, choice, err := bot.ParseApprovalButton(c.Data)
	if err != nil {
		return "That button is not one I know; nothing changed."
	}
	a, err := r.svc.Approval(ctx, id)
	if err != nil {
		return "That approval does not exist (any more); nothing changed."
	}
	if _, ok := r.clickedPost(ctx, a, c); !ok {
		return "That button does not belong to this conversation; nothing changed."
	}
	return r.decide(ctx, c.Transport, c.Team, c.User, a, choice)
}

// decide records an approver's choice on approval a, from a button or from
// a DM, and returns the answer the
// approver alone sees. The runner refuses the requester, a decided and an
// expired approval, and records the decision with its approver in the
// approval's audit trail; exactly one decision wins.
func (r *Relay) decide(ctx context.Context, transport, team, user string, a runner.Approval, choice runner.Choice) string {
	ok, err := r.mayApprove(ctx, transport, team, user)
	if err != nil {
		return r.safeMessage(err, "checking who may decide")
	}
	requester := a.Requester != "" && a.Requester == bot.Principal(transport, team, user)
	if !ok {
		if requester {
			return requesterRefused
		}
		return "Only approvers may decide this; nothing changed."
	}
	_, err = r.svc.Decide(ctx, runner.Decision{
		ApprovalID: a.ID, Decision: string(choice), Approver: bot.Principal(transport, team, user), CallHash: a.CallHash,
	})
	if err != nil {
		var re *runner.Error
		if errors.As(err, &re) {
			switch {
			case errors.Is(re.Kind, runner.ErrConflict):
				return "This was decided already; nothing changed."
			case errors.Is(re.Kind, runner.ErrExpired):
				return "This approval expired; the call was refused."
			case errors.Is(re.Kind, runner.ErrForbidden) && requester:
				return requesterRefused
			case errors.Is(re.Kind, runner.ErrForbidden):
				return re.Message
			}
		}
		return r.safeMessage(err, "recording your decision")
	}
	// The approval_decided event edits the messages through the task's
	// watcher; with no watcher here (it runs on another node, or the task
	// was relayed before a restart) edit them now.
	if !r.relayedSomewhere(ctx, a.TaskID) {
		if decided, err := r.svc.Approval(ctx, a.ID); err == nil {
			r.showDecided(ctx, decided)
		}
	}
	return ""
}

func approvalKey(id string) string { return "approval:" + id }
