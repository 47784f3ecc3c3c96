package relay

import "net/url"

// taskURL is where a person follows task id beyond the chat: under [serve]
// public_url, "" without one: the dashboard's page for the task, which
// sends a person who is not signed in to sign in and back.
func (r *Relay) taskURL(id string) string {
	if r.cfg.PublicURL == "" {
		return ""
	}
	return r.cfg.PublicURL + "/tasks/" + url.PathEscape(id)
}
