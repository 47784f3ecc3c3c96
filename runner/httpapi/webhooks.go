package httpapi

import (
	"net/http"

	"reasonix/runner/apitype"
)

// listWebhooks is GET /api/v1/webhooks: the configured webhooks and their
// recent deliveries (?recent=N, default 10). Any principal may read it;
// it holds no secrets and no payloads.
func (a *API) listWebhooks(w http.ResponseWriter, r *http.Request) {
	recent, ok := intParam(w, r, "recent", 1, 100, 10)
	if !ok {
		return
	}
	list, err := a.hooks.List(r.Context(), recent)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]apitype.Webhook, 0, len(list))
	for _, h := range list {
		out = append(out, ViewWebhook(h))
	}
	writeJSON(w, http.StatusOK, apitype.WebhookList{Webhooks: out})
}
