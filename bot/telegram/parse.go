package telegram

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"

	"reasonix/bot"
)

var errIgnored = errors.New("telegram: ignored update")

type user struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	Username  string `json:"username"`
	FirstName string `json:"first_name"`
}

type message struct {
	MessageID int64 `json:"message_id"`
	From      *user `json:"from"`
	Chat      struct {
		ID   int64  `json:"id"`
		Type string `json:"type"` // private, group, supergroup, channel
	} `json:"chat"`
	Text     string `json:"text"`
	Entities []struct {
		Type   string `json:"type"`
		Offset int    `json:"offset"`
		Length int    `json:"length"`
	} `json:"entities"`
	ReplyTo *struct {
		MessageID int64 `json:"message_id"`
		From      *user `json:"from"`
	} `json:"reply_to_message"`
}

// update is the part of a Telegram Update we read.
type update struct {
	UpdateID int64    `json:"update_id"`
	Message  *message `json:"message"`
	Callback *struct {
		ID      string   `json:"id"`
		From    user     `json:"from"`
		Message *message `json:"message"`
		Data    string   `json:"data"`
	} `json:"callback_query"`
}

// me is the bot itself, for recognising mentions and replies.
type me struct {
	ID       int64
	Username string
}

// parsed is one update: a message, a click, or neither.
type parsed struct {
	UpdateID int64
	In       *bot.Inbound
	Click    *bot.Click
	// CallbackID must be answered even when the click is refused.
	CallbackID string
}

const maxText = 4096 * 4

// parseUpdate reads one update.
func parseUpdate(raw []byte, self me) (parsed, error) {
	var u update
	if err := json.Unmarshal(raw, &u); err != nil {
		return parsed{}, err
	}
	p := parsed{UpdateID: u.UpdateID}
	switch {
	case u.Callback != nil:
		cb := u.Callback
		if cb.ID == "" || cb.From.ID == 0 || cb.Message == nil || cb.Message.Chat.ID == 0 {
			return p, errors.New("telegram: callback lacks id, sender or message")
		}
		p.CallbackID = cb.ID
		p.Click = &bot.Click{
			Transport: "telegram", EventID: "cb:" + cb.ID, User: strconv.FormatInt(cb.From.ID, 10),
			Channel: strconv.FormatInt(cb.Message.Chat.ID, 10), MessageID: strconv.FormatInt(cb.Message.MessageID, 10),
			Data: cb.Data, Name: cb.From.FirstName,
		}
		return p, nil
	case u.Message != nil:
		in, err := parseMessage(u.Message, self)
		if err != nil {
			return p, err
		}
		in.EventID = strconv.FormatInt(u.UpdateID, 10)
		p.In = &in
		return p, nil
	}
	return p, errIgnored
}

func parseMessage(m *message, self me) (bot.Inbound, error) {
	if m.From == nil || m.From.IsBot || m.From.ID == 0 || m.Chat.ID == 0 || m.MessageID == 0 {
		return bot.Inbound{}, errIgnored
	}
	if m.Text == "" || len(m.Text) > maxText {
		return bot.Inbound{}, errIgnored
	}
	in := bot.Inbound{
		Transport: "telegram", User: strconv.FormatInt(m.From.ID, 10), Channel: strconv.FormatInt(m.Chat.ID, 10),
		MessageID: strconv.FormatInt(m.MessageID, 10), DM: m.Chat.Type == "private", Name: m.From.FirstName,
	}
	text := m.Text
	mention := "@" + self.Username
	addressed := in.DM
	for _, e := range m.Entities {
		part, ok := entityText(m.Text, e.Offset, e.Length)
		if !ok {
			continue
		}
		switch e.Type {
		case "mention":
			if self.Username != "" && strings.EqualFold(part, mention) {
				addressed = true
				text = strings.Replace(text, part, "", 1)
			}
		case "bot_command":
			// /goal in a private chat, /goal@thisbot anywhere.
			if cmd, at, found := strings.Cut(part, "@"); found {
				if strings.EqualFold(at, self.Username) {
					addressed = true
					text = strings.Replace(text, part, cmd, 1)
				}
			} else if e.Offset == 0 && in.DM {
				addressed = true
			}
		}
	}
	if m.ReplyTo != nil {
		in.Thread = strconv.FormatInt(m.ReplyTo.MessageID, 10)
		if m.ReplyTo.From != nil && m.ReplyTo.From.ID == self.ID {
			addressed = true
		}
	}
	in.Addressed = addressed
	in.Text = strings.TrimSpace(text)
	return in, nil
}

// entityText cuts an entity out of text; Telegram counts offsets in UTF-16
// code units.
func entityText(text string, offset, length int) (string, bool) {
	u := utf16.Encode([]rune(text))
	if offset < 0 || length <= 0 || offset+length > len(u) {
		return "", false
	}
	return string(utf16.Decode(u[offset : offset+length])), true
}
