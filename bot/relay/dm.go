package relay

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"reasonix/bot"
	"reasonix/runner"
)

// decideInDM decides an approval an approver named in a direct message
// with the bot ("approve a_…", "approve a_… task", "deny a_…"). A DM is a
// conversation with one authenticated user, so it is as good a place to
// decide as the approval's own message: the same checks apply (an
// approver, not the requester, pending and unexpired, the first decision
// wins, audited under the approver's principal). The approval id is
// opaque and grants nothing by itself. It reports false when reading the
// store failed before anything was decided, for a redelivery to retry; a
// decision is taken once by the store, so a repeat only hears that it
// was decided already.
func (r *Relay) decideInDM(ctx context.Context, t bot.Transport, in bot.Inbound, id string, choice runner.Choice) bool {
	ok, err := r.mayApprove(ctx, in.Transport, in.Team, in.User)
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "checking who may decide"))
		return false
	}
	if !ok {
		if !r.access[in.Transport].dmAllowed(in) {
			// A stranger gets the one polite refusal, not an answer per try.
			r.refuseDM(ctx, t, in)
			return true
		}
		r.reply(ctx, t, in.Channel, in.Home(), "Only approvers may decide approvals; nothing changed.")
		return true
	}
	if !bot.WholeApprovalID(id) {
		whole, answer, err := r.completeApprovalID(ctx, in, id)
		if err != nil {
			r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "looking for the approval"))
			return false
		}
		if answer != "" {
			r.reply(ctx, t, in.Channel, in.Home(), answer)
			return true
		}
		id = whole
	}
	a, err := r.svc.Approval(ctx, id)
	if errors.Is(err, runner.ErrNotFound) {
		r.reply(ctx, t, in.Channel, in.Home(), "There is no approval "+id+"; nothing changed. Say approvals to list the ones waiting for you.")
		return true
	} else if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "reading the approval"))
		return false
	}
	if answer := r.decide(ctx, in.Transport, in.Team, in.User, a, choice); answer != "" {
		r.reply(ctx, t, in.Channel, in.Home(), answer)
		return true
	}
	r.log.Info("relay: approval decided in a direct message", "approval", a.ID, "task", a.TaskID, "approver", in.Requester(), "decision", choice)
	what := map[runner.Choice]string{runner.AllowOnce: "Allowed once", runner.AllowTask: "Allowed for the task", runner.AllowAlways: "Allowed always", runner.Deny: "Denied"}[choice]
	r.reply(ctx, t, in.Channel, in.Home(), what+": "+a.Tool+" "+firstLine(a.Subject, 120)+" (approval "+a.ID+", task "+a.TaskID+").")
	return true
}

// completeApprovalID finds the one pending approval whose id starts with
// prefix among those the DM's author may decide — wherever it was asked,
// as its whole id would reach it. answer, when not "", says why there is
// none to decide: no match, or several (counted, not listed: a DM shows
// no other conversation's calls).
func (r *Relay) completeApprovalID(ctx context.Context, in bot.Inbound, prefix string) (id, answer string, err error) {
	p, err := r.principal(ctx, in.Transport, in.Team, in.User)
	if err != nil {
		return "", "", err
	}
	list, err := r.svc.DecidableApprovals(ctx, p, 200)
	if err != nil {
		return "", "", err
	}
	n := 0
	for _, a := range list {
		if strings.HasPrefix(a.ID, prefix) {
			id, n = a.ID, n+1
		}
	}
	switch n {
	case 0:
		return "", "No approval waiting for you starts with " + prefix + "; nothing changed. Say approvals in a task's channel to list them.", nil
	case 1:
		return id, "", nil
	}
	return "", fmt.Sprintf("%d approvals waiting for you start with %s; nothing changed. Say more of its id.", n, prefix), nil
}
