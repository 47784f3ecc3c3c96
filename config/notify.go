package config

// NotifyTarget is a place an unattended task reports to, e.g. a Slack
// channel: the `notify` entries of [[webhooks]] (and schedules).
type NotifyTarget struct {
	Transport string `toml:"transport"`        // "slack", "telegram", …
	Channel   string `toml:"channel"`          // channel or chat id
	Thread    string `toml:"thread,omitempty"` // thread ts or reply-to message id; "" starts one
}

func checkNotify(p *problems, source, field string, list []NotifyTarget) {
	for i, n := range list {
		if n.Transport == "" || n.Channel == "" {
			p.add(source, field, "entry %d needs a transport and a channel", i)
		}
	}
}
