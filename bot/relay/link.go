package relay

import "net/url"

// taskURL is where a person follows task id beyond the chat: under [serve]
// public_url, "" without one. There is no dashboard page for a task yet,
// so this is the API's task resource (it needs a bearer token); when the
// dashboard serves /tasks/<id>, only this line changes.
func (r *Relay) taskURL(id string) string {
	if r.cfg.PublicURL == "" {
		return ""
	}
	return r.cfg.PublicURL + "/api/v1/tasks/" + url.PathEscape(id)
}
