package relay

import (
	"context"
	"strings"
	"sync"
	"time"

	"reasonix/bot"
)

// People are shown by name in chat: the principal id ("slack:T…/U…",
// "telegram:123") is for audits and the dashboard. A name is asked of
// the platform (bot.Directory) at most once per user per nameTTL, or
// learned for free from a delivery that carries it (Telegram's first
// name), and a failed lookup is remembered as long, so a platform that
// does not answer is not asked on every message.

// nameTTL is how long a name is trusted: people rename themselves rarely,
// and a stale name for an hour misleads nobody.
const nameTTL = time.Hour

// nameLookupTimeout bounds one lookup: a name is a nicety, never a reason
// to hold a message back for long.
const nameLookupTimeout = 3 * time.Second

type names struct {
	mu       sync.Mutex
	known    map[string]nameEntry     // by principal id
	inflight map[string]chan struct{} // lookups under way, by principal id
}

type nameEntry struct {
	name string // "" when the platform could not say
	at   time.Time
}

// learn records the name a delivery carried for principal.
func (r *Relay) learn(principal, name string) {
	name = strings.TrimSpace(name)
	if name == "" {
		return
	}
	r.names.mu.Lock()
	defer r.names.mu.Unlock()
	r.remember(principal, name)
}

// remember records name for principal; the caller holds r.names.mu. The
// cache is bounded: past 10,000 people it forgets everyone rather than grow.
func (r *Relay) remember(principal, name string) {
	if len(r.names.known) > 10000 {
		clear(r.names.known)
	}
	r.names.known[principal] = nameEntry{name: name, at: r.now()}
}

// who is how chat names principal: the person's name, else a
// description without the principal id ("a Slack user"). A principal
// that is no chat user's (an API token's name, an admin's login) is shown
// as it is.
func (r *Relay) who(ctx context.Context, principal string) string {
	transport, team, user, ok := bot.ParsePrincipal(principal)
	if !ok {
		return principal
	}
	if n := r.nameOf(ctx, principal, transport, team, user); n != "" {
		return n
	}
	switch transport {
	case "slack":
		return "a Slack user (" + user + ")"
	case "telegram":
		return "a Telegram user (" + user + ")"
	}
	return "someone"
}

func (r *Relay) nameOf(ctx context.Context, principal, transport, team, user string) string {
	for {
		r.names.mu.Lock()
		if e, ok := r.names.known[principal]; ok && r.now().Sub(e.at) < nameTTL {
			r.names.mu.Unlock()
			return e.name
		}
		wait, busy := r.names.inflight[principal]
		if !busy {
			r.names.inflight[principal] = make(chan struct{})
		}
		r.names.mu.Unlock()
		if !busy {
			break
		}
		select { // another goroutine asks the platform; its answer is ours
		case <-wait:
		case <-ctx.Done():
			return ""
		}
	}
	name := ""
	if d, ok := r.transports[transport].(bot.Directory); ok {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), nameLookupTimeout)
		n, err := d.UserName(lctx, team, user)
		cancel()
		if err != nil {
			r.log.Info("relay: looking up a user's name", "transport", transport, "user", user, "err", err)
		}
		name = strings.TrimSpace(n)
	}
	r.names.mu.Lock()
	r.remember(principal, name)
	close(r.names.inflight[principal])
	delete(r.names.inflight, principal)
	r.names.mu.Unlock()
	return name
}

// mention is principal in f's markup: a mention that notifies them where
// the transport has one and the principal is of that transport, else
// their name.
func (r *Relay) mention(ctx context.Context, t bot.Transport, principal string) string {
	f := t.Format()
	name := r.who(ctx, principal)
	transport, _, user, ok := bot.ParsePrincipal(principal)
	if m, can := f.(bot.Mentioner); can && ok && transport == t.Name() {
		return m.Mention(user, name)
	}
	return f.Escape(name)
}
