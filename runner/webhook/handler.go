package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"reasonix/config"
	"reasonix/internal/ids"
	"reasonix/internal/intakebudget"
	"reasonix/runner"
	"reasonix/runner/store"
)

// Submitter starts tasks; *runner.Service is one.
type Submitter interface {
	Submit(ctx context.Context, req runner.TaskRequest) (store.Task, bool, error)
}

var _ Submitter = (*runner.Service)(nil)

// Config assembles a Handler. Hooks, Service and Store are required.
type Config struct {
	Hooks   *Hooks
	Service Submitter
	// Store records every delivery.
	Store *store.Store
	// Now is the clock of the Standard Webhooks timestamp check; nil means
	// time.Now.
	Now func() time.Time
	// Logger receives accepted deliveries and failures; nil uses
	// slog.Default().
	Logger *slog.Logger
	// Budget bounds the bytes that bodies not yet verified hold at once;
	// the service shares one between every unauthenticated intake. nil
	// means one of intakebudget.DefaultBytes for this handler alone.
	Budget *intakebudget.Budget
}

// Handler serves POST /hooks/{name}. It needs no bearer token: the
// signature is the credential. Build it with NewHandler.
type Handler struct {
	hooks  *Hooks
	svc    Submitter
	st     *store.Store
	now    func() time.Time
	log    *slog.Logger
	budget *intakebudget.Budget
}

// NewHandler validates cfg and returns the handler.
func NewHandler(cfg Config) (*Handler, error) {
	if cfg.Hooks == nil || cfg.Service == nil || cfg.Store == nil {
		return nil, errors.New("webhook: hooks, a service and a store are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Budget == nil {
		cfg.Budget = intakebudget.New(0)
	}
	return &Handler{hooks: cfg.Hooks, svc: cfg.Service, st: cfg.Store, now: cfg.Now, log: cfg.Logger, budget: cfg.Budget}, nil
}

// maxDeliveryID bounds the sender's delivery id, which becomes part of a
// dedupe key.
const maxDeliveryID = 128

// outcome is one answer to a delivery, as sent and as recorded.
type outcome struct {
	status   int
	kind     store.DeliveryOutcome
	reason   string // safe to show the sender and to record
	taskID   string
	delivery string
	event    string
	// busy: refused for want of intake budget; the answer says when to
	// retry.
	busy bool
	// woke counts the tasks waiting for CI a check delivery woke.
	woke int
}

// ServeHTTP verifies, filters, renders and submits one delivery. The order
// matters: the signature headers are checked before the body is read, the
// body is read within the intake budget and hashed as it is read, and
// nothing of it is parsed before the signature verifies.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hk := h.hooks.byName[r.PathValue("name")]
	if hk == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"code": "not_found", "message": "no such webhook"})
		return
	}
	o := h.handle(r, hk)
	if _, err := h.st.RecordDelivery(context.WithoutCancel(r.Context()), store.Delivery{Webhook: hk.cfg.Name,
		DeliveryID: o.delivery, Event: o.event, Outcome: o.kind, Status: o.status, Reason: o.reason, TaskID: o.taskID}); err != nil {
		// The task (if any) is committed; losing its audit line must not
		// make the sender deliver again.
		h.log.Error("webhook: recording a delivery", "webhook", hk.cfg.Name, "err", err)
	}
	if o.busy {
		w.Header().Set("Retry-After", intakebudget.RetryAfter)
	}
	switch {
	case o.status == http.StatusNoContent:
		w.WriteHeader(o.status)
	case o.woke > 0:
		writeJSON(w, o.status, map[string]any{"woke": o.woke})
	case o.taskID != "":
		body := map[string]any{"task_id": o.taskID}
		if o.kind == store.DeliveryDuplicate {
			body["duplicate"] = true
		}
		writeJSON(w, o.status, body)
	default:
		writeJSON(w, o.status, map[string]string{"code": errorCode(o.status), "message": o.reason})
	}
}

// errorCode is the API's error code for a status, so a delivery's errors
// read like every other error of the service.
func errorCode(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusRequestEntityTooLarge:
		return "too_large"
	case http.StatusTooManyRequests:
		return "busy"
	case http.StatusUnprocessableEntity:
		return "unprocessable"
	case http.StatusServiceUnavailable:
		return "unavailable"
	case http.StatusInternalServerError:
		return "internal"
	}
	return "invalid"
}

func (h *Handler) handle(r *http.Request, hk *hook) outcome {
	switch hk.cfg.Kind {
	case config.WebhookGitHub:
		return h.github(r, hk)
	case config.WebhookGitLab:
		return h.gitlab(r, hk)
	}
	return h.standard(r, hk)
}

func (h *Handler) github(r *http.Request, hk *hook) outcome {
	o := outcome{delivery: r.Header.Get(headerGitHubDelivery), event: r.Header.Get(headerGitHubEvent)}
	check, err := newGitHubCheck(r.Header, hk.secrets)
	if err != nil {
		return rejected(o, http.StatusUnauthorized, err.Error())
	}
	body, err := h.budget.Read(r, hk.maxBody(), check)
	if err != nil {
		return refused(o, err)
	}
	defer body.Release()
	if err := check.verify(); err != nil {
		return rejected(o, http.StatusUnauthorized, err.Error())
	}
	mac := check.sigs[0]
	if len(o.delivery) > maxDeliveryID {
		return rejected(o, http.StatusBadRequest, "the X-GitHub-Delivery header is too long")
	}
	if o.event == "ping" {
		return outcome{status: http.StatusNoContent, kind: store.DeliveryIgnored, reason: "ping", delivery: o.delivery, event: o.event}
	}
	if o.event == "" {
		return rejected(o, http.StatusBadRequest, "the X-GitHub-Event header is missing")
	}
	sum := sha256.Sum256(mac)
	// The delivery id catches GitHub's redeliveries; the signature catches
	// a captured request replayed under a new delivery id, which GitHub
	// does not sign.
	keys := []string{hk.cfg.Name + ":sig:" + hex.EncodeToString(sum[:])}
	if o.delivery != "" {
		keys = append(keys, hk.cfg.Name+":delivery:"+o.delivery)
	}
	return h.accept(r.Context(), hk, o, body.Bytes(), keys)
}

func (h *Handler) standard(r *http.Request, hk *hook) outcome {
	o := outcome{delivery: r.Header.Get(headerID)}
	id, check, err := newStandardCheck(r.Header, hk.secrets, h.now())
	if err != nil {
		return rejected(o, http.StatusUnauthorized, err.Error())
	}
	body, err := h.budget.Read(r, hk.maxBody(), check)
	if err != nil {
		return refused(o, err)
	}
	defer body.Release()
	if err := check.verify(); err != nil {
		return rejected(o, http.StatusUnauthorized, err.Error())
	}
	if len(id) > maxDeliveryID {
		return rejected(o, http.StatusBadRequest, "the webhook-id header is too long")
	}
	// The id is signed, so a replay under a new id does not verify.
	return h.accept(r.Context(), hk, o, body.Bytes(), []string{hk.cfg.Name + ":id:" + id})
}

// accept runs the verified delivery through events, filter and template,
// and submits it.
func (h *Handler) accept(ctx context.Context, hk *hook, o outcome, body []byte, keys []string) outcome {
	var payload any
	if err := json.Unmarshal(body, &payload); err != nil {
		return rejected(o, http.StatusBadRequest, "the body is not valid JSON")
	}
	event, action := o.event, ""
	switch hk.cfg.Kind {
	case config.WebhookHMAC:
		event, _ = lookupString(payload, "type")
		o.event = event
	case config.WebhookGitLab:
		// GitLab names the event in the payload too (X-Gitlab-Event is
		// its display name, "Pipeline Hook").
		event, _ = lookupString(payload, "object_kind")
		o.event = event
	default:
		if action, _ = lookupString(payload, "action"); action != "" {
			o.event = event + "." + action
		}
	}
	// A check delivery on the commit of a task waiting for CI wakes that
	// task and starts nothing: its pull request is the task's own work.
	if n := h.wakeCI(ctx, hk, event, payload); n > 0 {
		o.status, o.kind, o.woke = http.StatusAccepted, store.DeliveryAccepted, n
		o.reason = fmt.Sprintf("woke %d task(s) waiting for CI", n)
		return o
	}
	// A review or comment on a task's pull request steers that task, or
	// does nothing when its author may not: it never starts a task.
	if ro, handled := h.review(ctx, hk, o, event, payload, keys[0]); handled {
		return ro
	}
	if !hk.wants(event, action) {
		return ignored(o, "the event is not in the webhook's events")
	}
	if !hk.filter.Match(payload) {
		return ignored(o, errFiltered.Error())
	}
	rendered, err := render(hk.prompt, payload)
	if err != nil {
		return rejected(o, http.StatusUnprocessableEntity, err.Error())
	}
	origin := map[string]string{"webhook": hk.cfg.Name, "kind": hk.cfg.Kind, "delivery": o.delivery, "event": o.event}
	for k, v := range issueOrigin(hk.cfg.Kind, event, payload) {
		origin[k] = v
	}
	task, created, err := h.svc.Submit(ctx, runner.TaskRequest{
		Source:    store.SourceWebhook,
		Requester: "webhook:" + hk.cfg.Name,
		Prompt:    taskPrompt(hk.cfg.Name, o.delivery, o.event, rendered),
		// The command and its args are the operator's; the payload only
		// ever reaches the task inside the delimited block above.
		Command:    hk.cfg.Command,
		Args:       hk.cfg.Args,
		Goal:       hk.cfg.Goal,
		BudgetUSD:  hk.cfg.BudgetUSD,
		Workspace:  hk.cfg.Workspace,
		Posture:    hk.posture(),
		MaxPosture: hk.posture(),
		Notify:     hk.notify,
		DedupeKeys: keys,
		Origin:     origin,
	})
	var re *runner.Error
	switch {
	case err == nil && created:
		h.log.Info("webhook: delivery accepted", "webhook", hk.cfg.Name, "delivery", o.delivery, "event", o.event, "task", task.ID)
		o.status, o.kind, o.taskID = http.StatusAccepted, store.DeliveryAccepted, task.ID
		return o
	case err == nil:
		o.status, o.kind, o.taskID, o.reason = http.StatusOK, store.DeliveryDuplicate, task.ID, "seen before"
		return o
	case errors.As(err, &re) && errors.Is(re.Kind, runner.ErrUnavailable):
		return rejected(o, http.StatusServiceUnavailable, re.Message)
	case errors.As(err, &re) && (errors.Is(re.Kind, runner.ErrInvalid) || errors.Is(re.Kind, runner.ErrForbidden)):
		return rejected(o, http.StatusUnprocessableEntity, re.Message)
	}
	ref := newRef()
	h.log.Error("webhook: submitting a delivery", "ref", ref, "webhook", hk.cfg.Name, "delivery", o.delivery, "err", err)
	return rejected(o, http.StatusInternalServerError, "the task could not be stored; quote ref "+ref)
}

func lookupString(payload any, key string) (string, bool) {
	v, ok := lookup(payload, []string{key})
	s, isString := v.(string)
	return s, ok && isString
}

func rejected(o outcome, status int, reason string) outcome {
	o.status, o.kind, o.reason = status, store.DeliveryRejected, reason
	return o
}

func ignored(o outcome, reason string) outcome {
	o.status, o.kind, o.reason = http.StatusNoContent, store.DeliveryIgnored, reason
	return o
}

// refused is a body the intake budget did not let in: too large (413),
// no room now (429, with Retry-After), or unreadable (400).
func refused(o outcome, err error) outcome {
	o = rejected(o, intakebudget.Status(err), err.Error())
	o.busy = errors.Is(err, intakebudget.ErrBusy)
	return o
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func newRef() string { return ids.Hex(4) }
