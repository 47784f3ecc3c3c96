package telegram

import (
	"encoding/json"
	"testing"
)

// A ChatMember object is read as Telegram sends it; only the statuses of
// a member, and a restricted member still in the chat, count as in.
func TestMemberStatus(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"status":"creator","user":{"id":1}}`:      true,
		`{"status":"administrator"}`:                true,
		`{"status":"member"}`:                       true,
		`{"status":"restricted","is_member":true}`:  true,
		`{"status":"restricted","is_member":false}`: false,
		`{"status":"left"}`:                         false,
		`{"status":"kicked","until_date":0}`:        false,
	} {
		got, err := memberStatus(json.RawMessage(raw))
		if err != nil || got != want {
			t.Errorf("memberStatus(%s) = %v, %v; want %v", raw, got, err, want)
		}
	}
	for _, raw := range []string{`{"status":"owner"}`, `{}`, `[]`, `null`, `{"status":1}`} {
		if got, err := memberStatus(json.RawMessage(raw)); err == nil || got {
			t.Errorf("memberStatus(%s) = %v, %v; want an error", raw, got, err)
		}
	}
	for desc, want := range map[string]bool{
		"Bad Request: user not found":         true,
		"Bad Request: PARTICIPANT_ID_INVALID": true,
		"Bad Request: member not found":       true,
		"Bad Request: chat not found":         false,
	} {
		if got := absentMember(desc); got != want {
			t.Errorf("absentMember(%q) = %v", desc, got)
		}
	}
}

// Whatever getChatMember answers, reading it never panics, and it counts
// as a member only with a member's status.
func FuzzMemberStatus(f *testing.F) {
	for _, s := range []string{`{"status":"member"}`, `{"status":"restricted","is_member":true}`, `{"status":"left"}`,
		`{"status":"member","status":"left"}`, `{"status":"MEMBER"}`, `{"status":"member\u0000"}`, `{"status":null}`,
		`{"is_member":true}`, `"member"`, `{`, ``, `{"status":"restricted","is_member":"yes"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		in, err := memberStatus(json.RawMessage(raw))
		if !in {
			return
		}
		if err != nil {
			t.Fatalf("member and an error: %v", err)
		}
		var m struct {
			Status string `json:"status"`
		}
		if json.Unmarshal(raw, &m) != nil {
			t.Fatalf("%q counted as a member though it is no object", raw)
		}
		switch m.Status {
		case "creator", "administrator", "member", "restricted":
		default:
			t.Fatalf("%q counted as a member with status %q", raw, m.Status)
		}
	})
}
