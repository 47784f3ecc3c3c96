package relay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"reasonix/bot"
	"reasonix/policy"
	"reasonix/runner"
)

// HandleMessage turns a message for the bot into a task, a steer, or a
// command's answer: it records the delivery as Receive does, and handles
// it at once. A transport that acknowledges deliveries to its platform
// calls Receive instead, and runs the handling once it has acknowledged.
//
// A delivery with an event id is handled at most once to its end, on any
// node and after any restart (see receipt.go): handled once, it is never
// handled again; one whose handler died or failed mid-way is handled again
// by the recovery pass. Handling it again is harmless: a task is submitted
// under the delivery's dedupe key, a steer is posted under it, the
// acknowledgement is a keyed chat post, and a decision is taken once by
// the store. A command's answer (help, status, tasks, approvals) may be
// sent a second time; that is only a repeated answer.
func (r *Relay) HandleMessage(ctx context.Context, in bot.Inbound) {
	run, err := r.Receive(ctx, in)
	if err != nil {
		r.log.Warn("relay: a delivery could not be recorded; not handling it", "transport", in.Transport, "event", in.EventID, "err", err)
		return
	}
	if run != nil {
		run(ctx)
	}
}

// handle acts on in and reports whether it is done with it: false only
// when the action failed in a way a redelivery may get past (the store or
// the service failed), true also when the message was refused or ignored,
// so such a message is not handled over and over.
func (r *Relay) handle(ctx context.Context, t bot.Transport, in bot.Inbound) bool {
	acc := r.access[in.Transport]
	r.learn(in.Requester(), in.Name)
	if in.DM {
		if id, choice, ok := bot.ParseDecision(in.Text); ok {
			return r.decideInDM(ctx, t, in, id, choice)
		}
		if !acc.dmAllowed(in) {
			r.refuseDM(ctx, t, in)
			return true
		}
	}
	if !in.Addressed {
		// Chatter in a thread: a steer when the thread is a task's home and
		// the author may give the bot work, else none of our business.
		if in.Thread == "" || !acc.userAllowed(in.User) {
			return true
		}
		id, err := r.st.ThreadTask(ctx, in.Transport, in.Channel, in.Thread)
		if errors.Is(err, runner.ErrRecordNotFound) {
			return true
		}
		if err != nil {
			r.log.Warn("relay: looking up a thread's task", "err", err)
			return false
		}
		return r.steer(ctx, t, in, id)
	}
	if !acc.userAllowed(in.User) {
		r.dropped(in, "the user is not in the allow list")
		if r.firstRefusal(in.Transport + ":" + in.User) {
			r.reply(ctx, t, in.Channel, in.Home(), "Sorry, I only take requests from people on my allow list. Ask an admin to add your user id ("+in.User+") if you need me.")
		}
		return true
	}
	cmd := bot.ParseCommand(in.Text)
	if in.Thread != "" && (cmd.Verb == bot.VerbTask || cmd.Verb == bot.VerbGoal || cmd.Verb == bot.VerbPlan) {
		if id, err := r.st.ThreadTask(ctx, in.Transport, in.Channel, in.Thread); err == nil {
			if ok, done := r.steerCommand(ctx, t, in, cmd.Text, id); ok {
				return done
			}
			return r.steer(ctx, t, in, id)
		} else if !errors.Is(err, runner.ErrRecordNotFound) {
			r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "looking up this thread's task"))
			return false
		}
	}
	// The answers to commands may be sent again by a redelivery.
	switch cmd.Verb {
	case bot.VerbHelp:
		r.reply(ctx, t, in.Channel, in.Home(), r.help(ctx, in, cmd))
	case bot.VerbStatus:
		r.status(ctx, t, in, cmd.Text)
	case bot.VerbCancel:
		r.cancelTask(ctx, t, in, cmd.Text)
	case bot.VerbTasks:
		r.listTasks(ctx, t, in)
	case bot.VerbApprovals:
		r.listApprovals(ctx, t, in)
	default:
		return r.submit(ctx, t, in, cmd)
	}
	return true
}

// transient reports whether err may pass when tried again: the service
// was unavailable, or something other than the request failed.
func transient(err error) bool {
	var re *runner.Error
	if errors.As(err, &re) {
		return errors.Is(re.Kind, runner.ErrUnavailable)
	}
	return true
}

// submit starts a task whose home is the message's thread. It reports
// false when a redelivery may succeed where this failed.
func (r *Relay) submit(ctx context.Context, t bot.Transport, in bot.Inbound, cmd bot.Command) bool {
	home := in.Home()
	target := runner.NotifyTarget{Transport: in.Transport, Channel: in.Channel, Thread: home}
	req := runner.TaskRequest{
		Source:    runner.Source(in.Transport),
		Requester: in.Requester(),
		Prompt:    cmd.Text,
		Goal:      cmd.Verb == bot.VerbGoal,
		// plan: with a planner the plan is written and kept, nothing
		// executes and a reply continues it; without one, a plan-first goal.
		PlanOnly:  cmd.Verb == bot.VerbPlan && r.cfg.Service.PlansOnly(),
		PlanFirst: cmd.Verb == bot.VerbPlan && !r.cfg.Service.PlansOnly(),
		Workspace: cmd.Workspace,
		Notify:    []runner.NotifyTarget{target},
		// No approvers list: who may decide is checked at each decision —
		// in chat a configured approver or an identity with the approve
		// role (mayApprove), through the API a token with that role — so
		// a role granted after the task started counts too.
	}
	if in.EventID != "" {
		req.DedupeKey = in.Transport + ":" + in.EventID
	}
	if route := r.cfg.Bot.Route(in.Transport, in.Channel); route != nil {
		req.Workspace = cmpStr(req.Workspace, route.Workspace)
		req.Posture = policy.Posture(route.Posture)
		req.Goal = req.Goal || route.Goal
		req.PlanFirst = req.PlanFirst || route.PlanFirst
	}
	asCommand(&req)
	task, _, err := r.svc.Submit(ctx, req)
	if err != nil {
		r.reply(ctx, t, in.Channel, home, r.safeMessage(err, "starting the task"))
		return !transient(err)
	}
	if err := r.st.BindThread(ctx, in.Transport, in.Channel, home, task.ID); err != nil {
		r.log.Error("relay: binding the thread", "task", task.ID, "err", err)
		return false
	}
	// An existing task (not created) is this very message's, submitted by
	// a handler that stopped before it was done (the dedupe key is the
	// event id): the acknowledgement is keyed and watching is idempotent,
	// so what that handler did not get to is done now, and nothing twice.
	r.ack(ctx, t, in, task.ID)
	r.watch(task.ID, target)
	return true
}

// ack shows at once that the request was taken: a reaction where the
// platform has them, else a short reply. It is recorded as the task's chat
// post under the delivery, so a redelivery handled again (after a crash)
// does not acknowledge it twice.
func (r *Relay) ack(ctx context.Context, t bot.Transport, in bot.Inbound, taskID string) {
	key := ""
	if in.EventID != "" {
		key = "ack:" + in.Transport + ":" + in.EventID
		if _, err := r.st.ChatPost(ctx, taskID, key); err == nil {
			return
		} else if !errors.Is(err, runner.ErrRecordNotFound) {
			r.log.Warn("relay: reading an acknowledgement", "task", taskID, "err", err)
		}
	}
	saved := func(id string) {
		if key == "" {
			return
		}
		p := runner.ChatPost{TaskID: taskID, Key: key, Transport: in.Transport, Channel: in.Channel, MessageID: id}
		if err := r.st.SaveChatPost(context.WithoutCancel(ctx), p); err != nil {
			r.log.Warn("relay: recording an acknowledgement", "task", taskID, "err", err)
		}
	}
	if rt, ok := t.(bot.Reactor); ok && in.MessageID != "" {
		if err := rt.React(ctx, in.Channel, in.MessageID); err == nil {
			saved(in.MessageID)
			// The request's reaction turns into the outcome's at the end
			// (the first request of a task keeps the key).
			p := runner.ChatPost{TaskID: taskID, Key: "request", Transport: in.Transport, Channel: in.Channel, MessageID: in.MessageID}
			if err := r.st.SaveChatPost(context.WithoutCancel(ctx), p); err != nil {
				r.log.Warn("relay: recording the request", "task", taskID, "err", err)
			}
			return
		}
	}
	f := t.Format()
	id, err := r.post(ctx, t, bot.Message{Channel: in.Channel, Thread: in.Home(), Text: f.Escape("queued " + taskID)})
	if err != nil {
		r.log.Warn("relay: acknowledging a request", "task", taskID, "err", err)
		return
	}
	saved(id)
	// A reply to the acknowledgement is a reply to the task.
	if err := r.st.BindThread(context.WithoutCancel(ctx), in.Transport, in.Channel, id, taskID); err != nil {
		r.log.Warn("relay: binding the acknowledgement", "task", taskID, "err", err)
	}
}

// steer delivers a reply in a task's thread: it steers a running task and
// continues a finished one. The delivery's event id keys the message, so
// a redelivery handled again steers nothing twice. It reports false when
// a redelivery may succeed where this failed.
//
// Only the task's requester or an admin steers it (runner.Service.Message
// checks): anyone else in the thread is told once that their words were
// not passed on, and then left to talk in peace.
func (r *Relay) steer(ctx context.Context, t bot.Transport, in bot.Inbound, taskID string) bool {
	p, err := r.principal(ctx, in.Transport, in.Team, in.User)
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "checking who you are"))
		return !transient(err)
	}
	var task runner.Task
	if in.EventID != "" {
		task, err = r.svc.MessageOnce(ctx, taskID, p, in.Text, in.Transport+":"+in.EventID)
	} else {
		task, err = r.svc.Message(ctx, taskID, p, in.Text)
	}
	if errors.Is(err, runner.ErrForbidden) {
		if r.firstRefusal(in.Transport + ":" + in.User + ":" + taskID) {
			r.reply(ctx, t, in.Channel, in.Home(), "Only the person who asked for this task (or an admin) can steer or continue it; your message was not passed on.")
		}
		return true
	}
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "passing your reply on"))
		return !transient(err)
	}
	r.ack(ctx, t, in, task.ID)
	if task.State.Terminal() {
		return true
	}
	// Relay to the task's own home, which on Telegram is not the message
	// replied to.
	for _, n := range task.Notify {
		if n.Transport == in.Transport && n.Channel == in.Channel {
			r.watch(task.ID, n)
			return true
		}
	}
	r.watch(task.ID, runner.NotifyTarget{Transport: in.Transport, Channel: in.Channel, Thread: in.Thread})
	return true
}

// threadTask is the task named by arg, else the thread's own.
func (r *Relay) threadTask(ctx context.Context, in bot.Inbound, arg string) (string, bool) {
	if arg != "" {
		return strings.Fields(arg)[0], true
	}
	if in.Thread == "" {
		return "", false
	}
	id, err := r.st.ThreadTask(ctx, in.Transport, in.Channel, in.Thread)
	return id, err == nil
}

func (r *Relay) status(ctx context.Context, t bot.Transport, in bot.Inbound, arg string) {
	id, ok := r.threadTask(ctx, in, arg)
	if !ok {
		r.reply(ctx, t, in.Channel, in.Home(), "Which task? Say status <task id>, or ask in a task's thread.")
		return
	}
	p, err := r.principal(ctx, in.Transport, in.Team, in.User)
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "checking who you are"))
		return
	}
	task, err := r.svc.Task(ctx, id)
	if errors.Is(err, runner.ErrNotFound) || err == nil && !p.MaySee(task, in.Transport, in.Channel) {
		// The same answer for a task that exists elsewhere: an id says
		// nothing about tasks the asker may not see.
		r.reply(ctx, t, in.Channel, in.Home(), "I know of no task "+id+" you can see from here; ask in its thread or its channel.")
		return
	}
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "reading the task"))
		return
	}
	r.reply(ctx, t, in.Channel, in.Home(), fmt.Sprintf("%s is %s: %s", task.ID, stateWords(task.State), firstLine(task.Prompt, 200)))
}

func (r *Relay) cancelTask(ctx context.Context, t bot.Transport, in bot.Inbound, arg string) {
	id, ok := r.threadTask(ctx, in, arg)
	if !ok {
		r.reply(ctx, t, in.Channel, in.Home(), "Which task? Say cancel <task id>, or ask in a task's thread.")
		return
	}
	task, err := r.svc.Task(ctx, id)
	var p runner.Principal
	if err == nil {
		p, err = r.principal(ctx, in.Transport, in.Team, in.User)
	}
	if err == nil {
		// The chat user is the principal; a cancel is theirs to make only
		// for their own tasks (or as an admin), as through the API.
		err = p.MayControl(task)
	}
	if err == nil {
		_, err = r.svc.Cancel(ctx, id)
	}
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "cancelling the task"))
		return
	}
	r.reply(ctx, t, in.Channel, in.Home(), "Cancelling "+id+".")
}

func (r *Relay) listTasks(ctx context.Context, t bot.Transport, in bot.Inbound) {
	page, err := r.svc.Tasks(ctx, runner.TaskFilter{Requester: in.Requester(), Limit: 10})
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "listing tasks"))
		return
	}
	if len(page.Tasks) == 0 {
		r.reply(ctx, t, in.Channel, in.Home(), "You have no tasks yet.")
		return
	}
	var b strings.Builder
	b.WriteString("Your recent tasks:\n")
	for _, task := range page.Tasks {
		fmt.Fprintf(&b, "%s  %s  %s\n", task.ID, stateWords(task.State), firstLine(task.Prompt, 80))
	}
	r.reply(ctx, t, in.Channel, in.Home(), b.String())
}

// listApprovals answers `approvals`: the pending approvals the asker may
// decide and may see from here (runner.Service.ChatApprovals).
func (r *Relay) listApprovals(ctx context.Context, t bot.Transport, in bot.Inbound) {
	p, err := r.principal(ctx, in.Transport, in.Team, in.User)
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "checking who you are"))
		return
	}
	if p.ID == "" || p.MayDecide() != nil {
		r.reply(ctx, t, in.Channel, in.Home(), "Nothing is waiting for your decision: you are not an approver.")
		return
	}
	list, err := r.svc.ChatApprovals(ctx, p, in.Transport, in.Channel, 20)
	if err != nil {
		r.reply(ctx, t, in.Channel, in.Home(), r.safeMessage(err, "listing approvals"))
		return
	}
	var b strings.Builder
	for _, a := range list {
		when := "no deadline"
		if !a.NoDeadline() {
			when = "expires " + a.ExpiresAt.UTC().Format("15:04 MST")
		}
		fmt.Fprintf(&b, "%s  task %s  %s: %s (%s)\n", a.ID, a.TaskID, a.Tool, firstLine(a.Subject, 80), when)
	}
	if b.Len() == 0 {
		r.reply(ctx, t, in.Channel, in.Home(), "Nothing here is waiting for your decision.")
		return
	}
	r.reply(ctx, t, in.Channel, in.Home(), "Waiting for your decision (buttons in each task's thread, or say approve <id>, approve <id> task or deny <id> to me in a direct message):\n"+b.String())
}

// refuseDM answers a direct message from someone the bot does not talk
// with privately, once per quiet period.
func (r *Relay) refuseDM(ctx context.Context, t bot.Transport, in bot.Inbound) {
	r.dropped(in, "direct messages are taken only from users in the allow list")
	if r.firstRefusal(in.Transport + ":" + in.User) {
		r.reply(ctx, t, in.Channel, in.Home(), "Sorry, I only take direct messages from people on my allow list (by user id); mention me in one of my channels instead, or ask an admin to add your user id ("+in.User+").")
	}
}

// dropped logs, at info, a message addressed to the bot that it does not
// act on and why, so "the bot says nothing" has an answer in the log. The
// platform ids are logged; the text is not.
func (r *Relay) dropped(in bot.Inbound, why string) {
	r.log.Info("relay: dropped a message", "reason", why, "transport", in.Transport, "channel", in.Channel,
		"user", in.User, "dm", in.DM)
}

// refusalQuiet is how long a refused user is not told again: one polite
// refusal, not one per message.
const refusalQuiet = 10 * time.Minute

func (r *Relay) firstRefusal(who string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if at, ok := r.refused[who]; ok && now.Sub(at) < refusalQuiet {
		return false
	}
	if len(r.refused) > 10000 { // bounded: forget everyone rather than grow
		clear(r.refused)
	}
	r.refused[who] = now
	return true
}
