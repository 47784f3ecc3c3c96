package slack

import (
	"encoding/json"
	"errors"
	"html"
	"regexp"
	"strings"
	"sync"

	"reasonix/bot"
)

// errIgnored: a well-formed payload the relay has no use for (the bot's
// own messages, edits, joins, other apps' buttons).
var errIgnored = errors.New("slack: ignored payload")

// maxText bounds a message taken from Slack; Slack itself caps messages
// at 40,000 characters.
const maxText = 40000

// eventsAPIPayload is the envelope payload of an events_api request.
type eventsAPIPayload struct {
	TeamID  string `json:"team_id"`
	EventID string `json:"event_id"`
	Event   struct {
		Type        string `json:"type"`
		Subtype     string `json:"subtype"`
		User        string `json:"user"`
		BotID       string `json:"bot_id"`
		Text        string `json:"text"`
		Channel     string `json:"channel"`
		ChannelType string `json:"channel_type"`
		TS          string `json:"ts"`
		ThreadTS    string `json:"thread_ts"`
		Team        string `json:"team"`
	} `json:"event"`
}

var mention = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<@[UW][A-Z0-9]+(\|[^>]*)?>`) })

// parseEvent reads an events_api payload. botUser is the bot's own user
// id: its messages and its mentions are recognised by it.
func parseEvent(payload []byte, botUser string) (bot.Inbound, error) {
	var p eventsAPIPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return bot.Inbound{}, err
	}
	e := p.Event
	if p.EventID == "" || e.Channel == "" || e.TS == "" {
		return bot.Inbound{}, errors.New("slack: event lacks event_id, channel or ts")
	}
	if e.BotID != "" || e.Subtype != "" || e.User == "" || e.User == botUser {
		return bot.Inbound{}, errIgnored
	}
	if len(e.Text) > maxText {
		return bot.Inbound{}, errors.New("slack: message too long")
	}
	in := bot.Inbound{
		Transport: "slack", EventID: p.EventID, Team: cmpStr(p.TeamID, e.Team), User: e.User,
		Channel: e.Channel, MessageID: e.TS, DM: e.ChannelType == "im",
	}
	if e.ThreadTS != "" && e.ThreadTS != e.TS {
		in.Thread = e.ThreadTS
	}
	mentioned := botUser != "" && strings.Contains(e.Text, "<@"+botUser)
	switch e.Type {
	case "app_mention":
		in.Addressed = true
	case "message":
		switch {
		case in.DM:
			in.Addressed = true
		case mentioned:
			return bot.Inbound{}, errIgnored // app_mention delivers it
		case in.Thread == "":
			return bot.Inbound{}, errIgnored // channel chatter
		}
		// A thread reply without a mention: it matters only in a task's thread.
	default:
		return bot.Inbound{}, errIgnored
	}
	in.Text = plainText(e.Text)
	return in, nil
}

// plainText removes the bot's mention and undoes Slack's escaping, so the
// prompt reads as the person typed it.
func plainText(s string) string {
	s = mention().ReplaceAllStringFunc(s, func(m string) string { return "" })
	return strings.TrimSpace(html.UnescapeString(s))
}

// slashPayload is a slash command's payload.
type slashPayload struct {
	Command   string `json:"command"`
	Text      string `json:"text"`
	UserID    string `json:"user_id"`
	ChannelID string `json:"channel_id"`
	TeamID    string `json:"team_id"`
	TriggerID string `json:"trigger_id"`
}

// parseSlash reads a slash command's payload; one naming another command
// than command (the app's own, see Config.SlashCommand) is errIgnored: a
// payload the bot did not declare is no request to it.
func parseSlash(payload []byte, command string) (bot.Inbound, error) {
	var p slashPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return bot.Inbound{}, err
	}
	if !strings.EqualFold(p.Command, command) {
		return bot.Inbound{}, errIgnored
	}
	if p.UserID == "" || p.ChannelID == "" || p.TriggerID == "" {
		return bot.Inbound{}, errors.New("slack: slash command lacks user, channel or trigger")
	}
	if len(p.Text) > maxText {
		return bot.Inbound{}, errors.New("slack: command too long")
	}
	return bot.Inbound{
		Transport: "slack", EventID: "cmd:" + p.TriggerID, Team: p.TeamID, User: p.UserID,
		Channel: p.ChannelID, Text: strings.TrimSpace(p.Text), Addressed: true,
		DM: strings.HasPrefix(p.ChannelID, "D"),
	}, nil
}

// interactionPayload is the part of a block_actions payload we read.
type interactionPayload struct {
	Type      string              `json:"type"`
	Team      struct{ ID string } `json:"team"`
	User      struct{ ID string } `json:"user"`
	Channel   struct{ ID string } `json:"channel"`
	Container struct {
		MessageTS string `json:"message_ts"`
		ChannelID string `json:"channel_id"`
	} `json:"container"`
	TriggerID string `json:"trigger_id"`
	Actions   []struct {
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
		ActionTS string `json:"action_ts"`
	} `json:"actions"`
}

func parseInteraction(payload []byte) (bot.Click, error) {
	var p interactionPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return bot.Click{}, err
	}
	if p.Type != "block_actions" || len(p.Actions) != 1 {
		return bot.Click{}, errIgnored
	}
	c := bot.Click{
		Transport: "slack", Team: p.Team.ID, User: p.User.ID,
		Channel: cmpStr(p.Container.ChannelID, p.Channel.ID), MessageID: p.Container.MessageTS,
		Data: p.Actions[0].Value, EventID: p.TriggerID,
	}
	if c.User == "" || c.Channel == "" || c.MessageID == "" {
		return bot.Click{}, errors.New("slack: click lacks user, channel or message")
	}
	return c, nil
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
