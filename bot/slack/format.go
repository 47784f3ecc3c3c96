package slack

import (
	"strings"

	"reasonix/bot"
)

// format is Slack mrkdwn. Escaping &, < and > is all Slack needs: every
// link, mention and broadcast (<!channel>, <!here>, <@U…>) is written with
// angle brackets, so escaped model text can never ping anyone.
type format struct{}

var _ bot.Format = format{}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func (format) Escape(s string) string { return escaper.Replace(s) }
func (format) Bold(s string) string {
	if s == "" {
		return ""
	}
	return "*" + s + "*"
}

// Code is a preformatted block; nothing for empty text, which Slack would
// show as six backticks.
func (format) Code(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return "```" + strings.ReplaceAll(s, "```", "ʼʼʼ") + "```"
}

var _ bot.Mentioner = format{}

// Mention is <@U…>, which Slack shows as the person's name and notifies
// them by; an id that is not one is shown as the name.
func (f format) Mention(user, name string) string {
	for _, c := range user {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return f.Escape(name)
		}
	}
	if user == "" {
		return f.Escape(name)
	}
	return "<@" + user + ">"
}

// Limit is a section block's text limit, the tightest Slack applies to
// what we post.
func (format) Limit() int { return 3000 }
