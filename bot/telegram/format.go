package telegram

import (
	"strconv"
	"strings"

	"reasonix/bot"
)

// format is Telegram's HTML parse mode: escaping &, < and > (and quotes)
// is all it needs, unlike MarkdownV2 whose escaping rules the library gets
// wrong.
type format struct{}

var _ bot.Format = format{}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func (format) Escape(s string) string { return escaper.Replace(s) }
func (format) Bold(s string) string {
	if s == "" {
		return ""
	}
	return "<b>" + s + "</b>"
}

var _ bot.Mentioner = format{}

// Mention links the name to the user (tg://user?id=…), which notifies
// them; an id that is not one is shown as the name.
func (f format) Mention(user, name string) string {
	if _, err := strconv.ParseInt(user, 10, 64); err != nil || name == "" {
		return f.Escape(name)
	}
	return `<a href="tg://user?id=` + user + `">` + f.Escape(name) + "</a>"
}

func (format) Code(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return "<pre>" + s + "</pre>"
}

// Limit is Telegram's 4,096 characters per message.
func (format) Limit() int { return 4096 }
