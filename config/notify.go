package config

// NotifyTarget is one place an unattended task reports to: a chat channel
// or thread. It is written as an inline table,
// notify = [{ transport = "slack", channel = "C0123" }].
type NotifyTarget struct {
	Transport string `toml:"transport"` // "slack", "telegram", …
	Channel   string `toml:"channel"`   // channel or chat id
	Thread    string `toml:"thread"`    // thread ts or reply-to message id; optional
}

func checkNotify(p *problems, source, field string, targets []NotifyTarget) {
	if len(targets) > 16 {
		p.add(source, field, "at most 16 targets are accepted (got %d)", len(targets))
	}
	for i, t := range targets {
		if t.Transport == "" || t.Channel == "" {
			p.add(source, field, "entry %d needs a transport and a channel", i)
		}
	}
}
