package relay

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"reasonix/bot"
	"reasonix/runner"
)

// An approval request is worth only as much as the approver who sees it.
// It is posted in the task's thread, mentioning the approvers who can
// decide it; and when that thread is a place no approver can see — a
// direct message between the bot and the requester — a copy, with the
// same buttons, goes to [bot] approvals_channel of the platform when one
// is set, else to each approver's own direct message with the bot. A
// click on any copy goes through the same door as one on the original
// (HandleClick → runner.Service.Decide), and every copy is edited to the
// decision, wherever it was taken.
//
// Which places approvers cannot see: the platform's own conversation type
// tells a direct message (Slack's D… channels, Telegram's private chats,
// whose ids are positive), which no approver sees; in a channel or group
// the platform says who is a member (bot.Members: Slack's
// conversations.members, Telegram's getChatMember), and each approver who
// is not gets the copy — in their direct message, or once in the
// approvals channel when one is set. When membership cannot be told (the
// platform refused, a transport without it) the channel is taken to hold
// its approvers, as before. Approvers granted their role with `reasonix
// roles grant` are named and sent copies like the configured ones.

// requesterRefused is what the task's requester hears when their click
// or message is refused because it is their own task.
const requesterRefused = "You asked for this task; another approver must decide. Nothing changed."

// maxCopies bounds the direct messages one approval request is copied to.
const maxCopies = 10

// hiddenHome reports whether target is a conversation no approver sees:
// a direct message with the bot.
func hiddenHome(target runner.NotifyTarget) bool {
	switch target.Transport {
	case "slack":
		return strings.HasPrefix(target.Channel, "D")
	case "telegram":
		return target.Channel != "" && target.Channel[0] != '-'
	}
	return false
}

// approversOf lists, as principals of transport t, the chat approvers who
// can decide approval a: the approvers the task names, when it names
// them, else the platform's configured approvers, the global approvers on
// the platform and the identities granted the role. The requester is left
// out (they may not decide their own task's calls, see
// runner.Service.MayDecide), and so is "*".
func (r *Relay) approversOf(ctx context.Context, t bot.Transport, a runner.Approval) []string {
	name := t.Name()
	_, team, _, _ := bot.ParsePrincipal(a.Requester)
	var out []string
	add := func(p string) {
		tr, _, user, ok := bot.ParsePrincipal(p)
		if ok && tr == name && user != "*" && p != a.Requester && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(a.Approvers) > 0 {
		for _, p := range a.Approvers {
			add(p)
		}
		return out
	}
	var ids []string
	switch name {
	case "slack":
		ids = r.cfg.Bot.Slack.Approvers
	case "telegram":
		ids = r.cfg.Bot.Telegram.Approvers
	}
	// A task from elsewhere (the API, a schedule) has no Slack team: its
	// approvers are still the app's workspace's, named and mentioned by
	// user id.
	for _, id := range ids {
		add(bot.Principal(name, team, id))
	}
	for _, p := range r.cfg.Bot.GlobalApprovers {
		add(p)
	}
	granted, err := r.svc.RoleApprovers(ctx, name)
	if err != nil {
		// The configured ones are still asked; the rest decide when they
		// see the request.
		r.log.Warn("relay: listing the approvers granted the role", "err", err)
	}
	for _, p := range granted {
		add(p)
	}
	return out
}

// approverMentions names the approvers who can decide a — mentioning
// them, so the platform notifies them, unless [bot.slack]
// mention_approvers is off — at most a handful. "" when none are known
// (roles decide then).
func (r *Relay) approverMentions(ctx context.Context, t bot.Transport, a runner.Approval) string {
	var out []string
	for _, p := range r.approversOf(ctx, t, a) {
		if len(out) == 5 {
			out = append(out, t.Format().Escape("…"))
			break
		}
		if t.Name() == "slack" && !r.cfg.Bot.Slack.Mentions() {
			out = append(out, t.Format().Escape(r.who(ctx, p)))
			continue
		}
		out = append(out, r.mention(ctx, t, p))
	}
	return strings.Join(out, ", ")
}

// copyChannels lists the channels of t an approval request of a task
// relayed to home is copied to, with the line each copy ends with to say
// why it came: none when every approver is where home is; for a direct
// message, the platform's approvals channel, else each approver's direct
// message with the bot; for a channel, the approvers who are not its
// members — in the approvals channel, else each in their direct message.
func (r *Relay) copyChannels(ctx context.Context, t bot.Transport, home runner.NotifyTarget, a runner.Approval, requester string) ([]string, string) {
	f := t.Format()
	approvers := r.approversOf(ctx, t, a)
	from := f.Escape("Asked in a direct message with ") + f.Escape(r.who(ctx, requester)) + f.Escape(", where no approver sees it: decide here.")
	if !hiddenHome(home) {
		approvers = r.outsiders(ctx, t, home.Channel, approvers)
		if len(approvers) == 0 {
			return nil, ""
		}
		from = f.Escape("Asked by "+r.who(ctx, requester)+" in a channel ") + f.Escape(approverWords(len(approvers))) + f.Escape(" not in: decide here.")
	}
	if ch := r.cfg.Bot.ApprovalsChannelOf(t.Name()); ch != "" {
		if ch == home.Channel {
			return nil, ""
		}
		return []string{ch}, from
	}
	d, ok := t.(bot.Direct)
	if !ok {
		return nil, ""
	}
	var out []string
	for _, p := range approvers {
		if len(out) == maxCopies {
			break
		}
		ch, err := r.dms.channel(ctx, d, p)
		if err != nil {
			r.log.Warn("relay: finding an approver's direct message", "approver", p, "err", err)
			continue
		}
		if ch != home.Channel && !slices.Contains(out, ch) {
			out = append(out, ch)
		}
	}
	return out, from
}

// approverWords names who a copy for n approvers outside a channel is
// for: the one it is sent to, or, in an approvals channel, several.
func approverWords(n int) string {
	if n == 1 {
		return "an approver is"
	}
	return "approvers are"
}

// outsiders keeps of approvers (principals of t) those who are not
// members of channel, as far as the platform tells: none when t cannot
// say, or the platform refused to (logged), so that a request is copied
// only to someone known to be outside.
func (r *Relay) outsiders(ctx context.Context, t bot.Transport, channel string, approvers []string) []string {
	m, ok := t.(bot.Members)
	if !ok {
		return nil
	}
	var out []string
	for _, p := range approvers {
		_, team, user, _ := bot.ParsePrincipal(p)
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), nameLookupTimeout)
		in, err := m.IsMember(lctx, channel, team, user)
		cancel()
		if err != nil {
			r.log.Warn("relay: checking whether an approver is in the channel; no copy sent", "approver", p, "channel", channel, "err", err)
			continue
		}
		if !in {
			out = append(out, p)
		}
	}
	return out
}

// dmChannels caches approvers' direct-message channels: Slack opens one
// with a platform call, and the answer does not change.
type dmChannels struct {
	mu    sync.Mutex
	known map[string]string // by principal
}

func (c *dmChannels) channel(ctx context.Context, d bot.Direct, principal string) (string, error) {
	c.mu.Lock()
	ch, ok := c.known[principal]
	c.mu.Unlock()
	if ok {
		return ch, nil
	}
	_, team, user, _ := bot.ParsePrincipal(principal)
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), nameLookupTimeout)
	defer cancel()
	ch, err := d.DirectChannel(lctx, team, user)
	if err != nil || ch == "" {
		return "", errors.Join(err, errors.New("no direct channel"))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known == nil || len(c.known) > 10000 {
		c.known = map[string]string{}
	}
	c.known[principal] = ch
	return ch, nil
}

// copyKey is the key of the n-th copy (from 1) of approval id.
func copyKey(id string, n int) string { return approvalKey(id) + "#" + strconv.Itoa(n) }

// approvalCopies lists the copies of approval id posted for task taskID.
func (r *Relay) approvalCopies(ctx context.Context, taskID, id string) []runner.ChatPost {
	n, err := r.st.CountChatPosts(ctx, taskID, approvalKey(id)+"#")
	if err != nil {
		r.log.Warn("relay: counting an approval's copies", "approval", id, "err", err)
		return nil
	}
	var out []runner.ChatPost
	for i := 1; i <= n; i++ {
		if p, err := r.st.ChatPost(ctx, taskID, copyKey(id, i)); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// postCopies copies the request of approval a, posted in the task's
// thread, where its approvers see it (see copyChannels). text is
// the request as posted, before the line that says where it comes from.
// A copy posted before (a restart) is not posted again.
func (w *watcher) postCopies(ctx context.Context, a runner.Approval, text string, buttons []bot.Button) {
	r := w.r
	channels, from := w.r.copyChannels(ctx, w.t, w.target, a, w.v.requester)
	if len(channels) == 0 {
		return
	}
	done := r.approvalCopies(ctx, w.v.taskID, a.ID)
	for _, ch := range channels {
		if slices.ContainsFunc(done, func(p runner.ChatPost) bool { return p.Transport == w.t.Name() && p.Channel == ch }) {
			continue
		}
		id, err := r.postUrgent(ctx, w.t, bot.Message{Channel: ch, Text: text + "\n" + from, Buttons: buttons})
		if err != nil {
			r.log.Warn("relay: copying an approval request", "approval", a.ID, "channel", ch, "err", err)
			continue
		}
		post := runner.ChatPost{TaskID: w.v.taskID, Key: copyKey(a.ID, len(done)+1), Transport: w.t.Name(), Channel: ch, MessageID: id}
		if err := r.st.SaveChatPost(context.WithoutCancel(ctx), post); err != nil {
			r.log.Warn("relay: saving an approval's copy", "approval", a.ID, "err", err)
			continue
		}
		done = append(done, post)
	}
}

// showDecided edits every message of approval a — the request in the
// task's thread and each of its copies — to say how it was decided.
func (r *Relay) showDecided(ctx context.Context, a runner.Approval) {
	if a.State == runner.ApprovalPending {
		return
	}
	posts := r.approvalCopies(ctx, a.TaskID, a.ID)
	if p, err := r.st.ChatPost(ctx, a.TaskID, approvalKey(a.ID)); err == nil {
		posts = append([]runner.ChatPost{p}, posts...)
	}
	for _, p := range posts {
		if t, ok := r.transports[p.Transport]; ok {
			r.editDecided(ctx, t, p, a)
		}
	}
}

// clickedPost finds the message of approval a that click c was on: its
// request in the task's thread or one of its copies. A click can arrive
// between the platform accepting a post and the relay recording it, so a
// pending approval is looked up again for a moment before giving up.
func (r *Relay) clickedPost(ctx context.Context, a runner.Approval, c bot.Click) (runner.ChatPost, bool) {
	match := func(p runner.ChatPost) bool {
		return p.Transport == c.Transport && p.Channel == c.Channel && p.MessageID == c.MessageID
	}
	for i := 0; ; i++ {
		if p, err := r.st.ChatPost(ctx, a.TaskID, approvalKey(a.ID)); err == nil && match(p) {
			return p, true
		}
		copies := r.approvalCopies(ctx, a.TaskID, a.ID)
		if j := slices.IndexFunc(copies, match); j >= 0 {
			return copies[j], true
		}
		if i == 30 || a.State != runner.ApprovalPending {
			return runner.ChatPost{}, false
		}
		select {
		case <-ctx.Done():
			return runner.ChatPost{}, false
		case <-time.After(100 * time.Millisecond):
		}
	}
}
