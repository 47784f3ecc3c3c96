package runner

import (
	"context"
	"errors"
	"slices"
	"strings"

	"reasonix/config"
	"reasonix/runner/forge"
	"reasonix/runner/store"
)

// chatIdentity splits a chat principal id ("slack:T1/U2", "telegram:42")
// into its platform and platform user id; ok is false for any other
// principal (a token's, a webhook's).
func chatIdentity(id string) (transport, user string, ok bool) {
	if !store.ValidChatPrincipal(id) {
		return "", "", false
	}
	transport, rest, _ := strings.Cut(id, ":")
	if transport == "slack" {
		_, rest, _ = strings.Cut(rest, "/")
	}
	return transport, rest, true
}

// ChatPrincipal is the principal of a chat identity ("slack:T1/U2",
// "telegram:42"), as the chat relay authenticated it through its platform:
// role approve when it is listed in its platform's approvers or in [bot]
// global_approvers, the role granted with `reasonix roles grant` when that
// is higher, else submit (whether it may give the bot work at all is the
// relay's allow list). The role is read at each call, so a revoked grant
// stops counting at once. An id that is no chat identity is an error
// wrapping ErrInvalid.
func (s *Service) ChatPrincipal(ctx context.Context, id string) (Principal, error) {
	transport, user, ok := chatIdentity(id)
	if !ok {
		return Principal{}, invalidf("%q is not a chat identity", id)
	}
	p := Principal{ID: id, Role: store.RoleSubmit}
	if slices.Contains(s.chatApprovers(transport), user) || s.globalApprover(id) {
		p.Role = store.RoleApprove
	}
	role, err := s.st.RoleOf(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return Principal{}, mapStoreErr(err, "the role of "+id)
	case !p.Role.AtLeast(role):
		p.Role = role
	}
	return p, nil
}

// RoleApprovers lists the chat identities of transport ("slack",
// "telegram") granted the approve role or higher with `reasonix roles
// grant`, so the relay can name and reach them as it does the configured
// approvers.
func (s *Service) RoleApprovers(ctx context.Context, transport string) ([]string, error) {
	roles, err := s.st.PrincipalRoles(ctx)
	if err != nil {
		return nil, mapStoreErr(err, "the granted roles")
	}
	var out []string
	for _, r := range roles {
		if tr, _, ok := chatIdentity(r.Principal); ok && tr == transport && r.Role.AtLeast(store.RoleApprove) {
			out = append(out, r.Principal)
		}
	}
	return out, nil
}

func (s *Service) chatApprovers(transport string) []string {
	switch transport {
	case "slack":
		return s.set.Bot.Slack.Approvers
	case "telegram":
		return s.set.Bot.Telegram.Approvers
	}
	return nil
}

func (s *Service) globalApprover(id string) bool {
	return slices.Contains(s.set.Bot.GlobalApprovers, id)
}

// relayedTo reports whether task t is relayed on transport where that
// platform's configuration admits it: an allowed channel or chat, or a
// direct message (which the relay takes only from users listed by id).
func (s *Service) relayedTo(t store.Task, transport string) bool {
	var allowed []string
	switch transport {
	case "slack":
		allowed = s.set.Bot.Slack.AllowChannels
	case "telegram":
		allowed = s.set.Bot.Telegram.AllowChats
	}
	for _, n := range t.Notify {
		if n.Transport == transport && (slices.Contains(allowed, n.Channel) || directChat(transport, n.Channel)) {
			return true
		}
	}
	return false
}

// directChat reports whether channel is a one-to-one conversation with
// the bot: Slack's D… channels, Telegram's private chats (whose ids are
// the user's, positive; groups are negative).
func directChat(transport, channel string) bool {
	switch transport {
	case "slack":
		return strings.HasPrefix(channel, "D")
	case "telegram":
		return channel != "" && channel[0] != '-'
	}
	return false
}

// MayDecide reports whether p may decide approval a, and why not as an
// *Error of kind ErrForbidden (or the error reading its task). It is the
// one rule every path applies — Decide (the API, the CLI, the dashboard,
// chat buttons and direct messages) and every list that offers decisions:
//
//   - p's role is approve or admin;
//   - when the task names its approvers, p is one of them (admins too);
//   - p did not request the task, unless p is an admin or self-approval
//     is on;
//   - p did not instruct the call — send the task a message it had read
//     when the call was asked for — unless p is its requester (above) or
//     self-approval is on; an admin role does not lift this: a second
//     person decides a call one's own message produced in someone else's
//     task;
//   - a chat identity that is neither an admin nor in [bot]
//     global_approvers decides only approvals of tasks relayed on its own
//     platform, in an allowed channel or a direct message;
//   - with [runner] require_second_approver (or the workspace's), nobody
//     decides the calls of a task they requested, admins and
//     self-approval included: a second person decides.
//
// Choosing "Allow always" also takes mayGrant.
//
// A refusal goes back to p alone — the API caller, the CLI, the
// dashboard's viewer, the chat user who clicked — so it speaks to p as
// "you", and no surface has to reword it.
func (s *Service) MayDecide(ctx context.Context, p Principal, a store.Approval) error {
	t, err := s.st.Task(ctx, a.TaskID)
	if err != nil {
		return mapStoreErr(err, "task "+a.TaskID)
	}
	return s.mayDecide(p, t, a)
}

func (s *Service) mayDecide(p Principal, t store.Task, a store.Approval) error {
	if p.ID == "" {
		return failf(ErrForbidden, "only approvers may decide approvals")
	}
	if err := p.MayDecide(); err != nil {
		return err
	}
	if len(a.Approvers) > 0 && !slices.Contains(a.Approvers, p.ID) {
		return failf(ErrForbidden, "task %s names its approvers, and you (%s) are not one of them", t.ID, p.ID)
	}
	// Principal ids come from credentials, so an exact comparison is the
	// whole check: "alice", "API:alice" or "token:Alice" are other
	// principals' ids, which a request cannot claim.
	if t.Requester != "" && p.ID == t.Requester && s.requireSecondApprover(t) {
		return failf(ErrForbidden, "you asked for this task, and its calls need a second person (require_second_approver); another approver must decide")
	}
	if !s.cfg.AllowSelfApproval {
		if !p.Role.AtLeast(store.RoleAdmin) && t.Requester != "" && p.ID == t.Requester {
			return failf(ErrForbidden, "you asked for this task; another approver must decide")
		}
		if p.ID != t.Requester && slices.Contains(a.Instructors, p.ID) {
			return failf(ErrForbidden, "you sent this task a message before it asked for this call, so you may not approve it; another approver must decide")
		}
	}
	if transport, _, chat := chatIdentity(p.ID); chat && !p.Role.AtLeast(store.RoleAdmin) && !s.globalApprover(p.ID) && !s.relayedTo(t, transport) {
		return failf(ErrForbidden, "task %s is not relayed where you (%s) approve; an approver of its own channel, a global approver or an admin must decide", t.ID, p.ID)
	}
	return nil
}

// requireSecondApprover reports whether the two-person rule holds for
// task t: [runner] require_second_approver, or its workspace's.
func (s *Service) requireSecondApprover(t store.Task) bool {
	if s.set.Runner.RequireSecondApprover {
		return true
	}
	for _, w := range s.set.Workspaces {
		if w.Name == t.Workspace {
			return w.RequireSecondApprover
		}
	}
	return false
}

// mayGrant reports whether p, who may decide an approval of task t
// (mayDecide), may also choose "Allow always" for it: a standing grant
// outlives the task, so it takes the grant or admin role, and never the
// task's requester — not even an admin, not even with self-approval on.
func (s *Service) mayGrant(p Principal, t store.Task) error {
	if !p.Role.AtLeast(store.RoleGrant) {
		return failf(ErrForbidden, "you may decide this call but not allow it always (role %s); a principal with the grant or admin role must", p.Role)
	}
	if t.Requester != "" && p.ID == t.Requester {
		return failf(ErrForbidden, "you asked for this task; another principal with the grant or admin role must allow its calls always")
	}
	return nil
}

// MayGrant reports whether p may choose "Allow always" on approval a (see
// mayGrant), after MayDecide; the chat relay asks it before it offers the
// button.
func (s *Service) MayGrant(ctx context.Context, p Principal, a store.Approval) error {
	t, err := s.st.Task(ctx, a.TaskID)
	if err != nil {
		return mapStoreErr(err, "task "+a.TaskID)
	}
	if err := s.mayDecide(p, t, a); err != nil {
		return err
	}
	return s.mayGrant(p, t)
}

// MaySee reports whether p may see task t from chat conversation
// (transport, channel): its requester and admins see it anywhere, anyone
// else where the task is relayed — the people of that channel see its
// thread anyway. It governs what the chat commands `status` and
// `approvals` show.
func (p Principal) MaySee(t store.Task, transport, channel string) bool {
	if p.Role.AtLeast(store.RoleAdmin) || (p.ID != "" && p.ID == t.Requester) {
		return true
	}
	for _, n := range t.Notify {
		if n.Transport == transport && n.Channel == channel {
			return true
		}
	}
	return false
}

// ChatApprovals lists, oldest first and at most limit of them, the pending
// approvals chat user p may decide (MayDecide) and may see from the
// conversation (transport, channel): those of tasks relayed there (MaySee);
// an admin or a [bot] global approver sees every one it may decide, from
// anywhere. It answers the chat command `approvals`.
func (s *Service) ChatApprovals(ctx context.Context, p Principal, transport, channel string, limit int) ([]store.Approval, error) {
	everywhere := p.Role.AtLeast(store.RoleAdmin) || s.globalApprover(p.ID)
	return s.decidable(ctx, p, limit, func(t store.Task) bool { return everywhere || p.MaySee(t, transport, channel) })
}

// DecidableApprovals lists, oldest first and at most limit of them, the
// pending approvals p may decide (MayDecide), wherever they were asked:
// what a whole approval id would let p decide, so a chat decision may
// name one by a prefix of its id.
func (s *Service) DecidableApprovals(ctx context.Context, p Principal, limit int) ([]store.Approval, error) {
	return s.decidable(ctx, p, limit, func(store.Task) bool { return true })
}

func (s *Service) decidable(ctx context.Context, p Principal, limit int, shown func(store.Task) bool) ([]store.Approval, error) {
	if p.ID == "" || p.MayDecide() != nil {
		return nil, nil
	}
	list, err := s.Approvals(ctx, ApprovalFilter{State: store.ApprovalPending, Limit: 200})
	if err != nil {
		return nil, err
	}
	var out []store.Approval
	for _, a := range list {
		if len(out) == limit {
			break
		}
		t, err := s.st.Task(ctx, a.TaskID)
		if err != nil || !shown(t) || s.mayDecide(p, t, a) != nil {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// instructors are the principals besides the requester whose messages
// the task's runs have read: the authors of what steered or continued it.
func (s *Service) instructors(ctx context.Context, t store.Task) ([]string, error) {
	authors, err := s.st.MessageAuthors(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	authors = slices.DeleteFunc(authors, func(a string) bool { return a == "" || a == t.Requester })
	slices.Sort(authors)
	return authors, nil
}

// MaySeeMemory reports whether p may see memory m: an admin any; a user
// memory only its own principal; a workspace memory every principal that
// may submit work (each of its tasks in that workspace recalls it anyway).
// It is the one rule the API, the CLI and the dashboard apply.
func (p Principal) MaySeeMemory(m store.Memory) bool {
	switch {
	case p.ID == "":
		return false
	case p.Role.AtLeast(store.RoleAdmin):
		return true
	case m.Scope.Kind == store.MemoryUser:
		return m.Scope.Name == p.ID
	}
	return p.Role.AtLeast(store.RoleSubmit)
}

// MayForgetMemory reports whether p may forget memory m, which it may see:
// an admin any; a user memory its own principal; a workspace memory, which
// every task of the workspace relies on, whoever saved it or a principal
// that may decide approvals.
func (p Principal) MayForgetMemory(m store.Memory) error {
	if !p.MaySeeMemory(m) {
		return failf(ErrNotFound, "memory %s not found", m.ID)
	}
	if p.Role.AtLeast(store.RoleApprove) || m.Scope.Kind == store.MemoryUser || m.By == p.ID {
		return nil
	}
	return failf(ErrForbidden, "memory %s is the workspace's; only who saved it (%s), an approver or an admin may forget it", m.ID, m.By)
}

// mayReview reports whether forge account who ("github:<login>",
// "gitlab:<username>"; login is its account name) may steer a pull request
// of workspace w with a review comment: it is listed in w's
// allow_reviewers, or the forge gives it write access or more to the
// project — asked through the forge's API at each comment, so a removed
// collaborator stops counting at once. The account comes from a signed
// delivery; it is no principal of this service and gets no other right.
func (s *Service) mayReview(ctx context.Context, w *config.Workspace, f forge.Forge, who, login string) (bool, error) {
	if slices.ContainsFunc(w.AllowReviewers, func(a string) bool { return strings.EqualFold(a, who) }) {
		return true, nil
	}
	perm, err := f.Permission(ctx, login)
	if err != nil {
		return false, err
	}
	return perm >= forge.PermWrite, nil
}
