package config

import (
	"fmt"

	"reasonix/internal/posture"
)

// UnattendedWarnings lists the schedules and webhooks whose tasks can need
// a person and have nobody to ask: a posture other than yolo (under ask
// every write needs an approval; under auto an explicit ask rule or nested
// execution still does) and no notify target on an enabled chat
// transport, so every such call is refused "unattended". Each warning
// names the entry and the fix. They are warnings, not errors: an entry
// that only reads runs fine. `config check` and `doctor` print them.
func (c *Config) UnattendedWarnings() []string {
	var out []string
	check := func(kind, name string, p posture.Posture, notify []NotifyTarget) {
		if p == posture.Yolo || c.reaches(notify) {
			return
		}
		out = append(out, fmt.Sprintf("%s %q (posture %s) has no notify target on an enabled chat transport: "+
			"a call that needs approval is refused, as nobody is there to approve it. "+
			"Add notify = [{transport = \"slack\", channel = \"C…\"}] (or telegram) to the entry, "+
			"or allow what it must do with [permissions] allow rules", kind, name, p))
	}
	for _, s := range c.Schedules {
		if s.IsEnabled() {
			check("schedule", s.Name, s.Posture, s.Notify)
		}
	}
	for _, w := range c.Webhooks {
		check("webhook", w.Name, w.Posture, w.Notify)
	}
	return out
}

// reaches reports whether a notify list names an enabled chat transport.
func (c *Config) reaches(notify []NotifyTarget) bool {
	for _, n := range notify {
		switch {
		case n.Transport == "slack" && c.Bot.Slack.Enabled, n.Transport == "telegram" && c.Bot.Telegram.Enabled:
			return true
		}
	}
	return false
}
