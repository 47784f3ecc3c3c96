package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"reasonix/bot"
)

var _ bot.Members = (*Transport)(nil)

// An answer of getChatMember is kept for memberTTL: an approval request
// asks about each of its approvers, and a busy group asks again and
// again, while people join and leave rarely.
const (
	memberTTL  = 5 * time.Minute
	maxMembers = 10000 // answers cached at once
)

type memberCache struct {
	mu    sync.Mutex
	known map[string]memberAnswer // by chat/user
}

type memberAnswer struct {
	member bool
	at     time.Time
}

// IsMember reports whether user is a member of chat (getChatMember):
// creator, administrator, member, or restricted and still a member. Left,
// kicked, or a user the chat does not know ("user not found") is not.
func (t *Transport) IsMember(ctx context.Context, chat, _, user string) (bool, error) {
	key := chat + "/" + user
	t.members.mu.Lock()
	a, ok := t.members.known[key]
	t.members.mu.Unlock()
	if ok && time.Since(a.at) < memberTTL {
		return a.member, nil
	}
	resp, err := t.call(ctx, "getChatMember", tgbotapi.Params{"chat_id": chat, "user_id": user})
	var member bool
	var te *tgbotapi.Error
	switch {
	case errors.As(err, &te) && te.Code == http.StatusBadRequest && absentMember(te.Message):
		member = false
	case err != nil:
		return false, err
	default:
		member, err = memberStatus(resp.Result)
		if err != nil {
			return false, err
		}
	}
	t.members.mu.Lock()
	defer t.members.mu.Unlock()
	if t.members.known == nil || len(t.members.known) >= maxMembers {
		t.members.known = map[string]memberAnswer{}
	}
	t.members.known[key] = memberAnswer{member: member, at: time.Now()}
	return member, nil
}

// absentMember reports whether a 400's description says the user is not
// in the chat at all.
func absentMember(desc string) bool {
	d := strings.ToLower(desc)
	return strings.Contains(d, "user not found") || strings.Contains(d, "member not found") || strings.Contains(d, "participant_id_invalid")
}

// memberStatus reads a ChatMember object.
func memberStatus(raw json.RawMessage) (bool, error) {
	var m struct {
		Status   string `json:"status"`
		IsMember bool   `json:"is_member"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return false, fmt.Errorf("telegram: reading getChatMember: %w", err)
	}
	switch m.Status {
	case "creator", "administrator", "member":
		return true, nil
	case "restricted":
		return m.IsMember, nil
	case "left", "kicked":
		return false, nil
	}
	return false, fmt.Errorf("telegram: getChatMember answered status %q", m.Status)
}
