package webhook

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/template"

	"reasonix/config"
	"reasonix/policy"
	"reasonix/runner/store"
)

// Body limits: GitHub sends payloads up to 25 MB, and GitLab's pipeline
// events grow with their jobs; other senders get 1 MiB.
const (
	MaxBody       = 1 << 20
	MaxGitHubBody = 25 << 20
)

// hook is a [[webhooks]] entry ready to serve: secrets read, filter and
// template compiled.
type hook struct {
	cfg     config.Webhook
	secrets [][]byte
	filter  *Filter
	prompt  *template.Template
	notify  []store.NotifyTarget
}

// Hooks is the compiled set of [[webhooks]] entries. It holds the signing
// secrets; it is read-only after Compile and safe for concurrent use.
type Hooks struct {
	byName map[string]*hook
	order  []string
	raw    []string // the secret values, for redaction
}

// Compile reads each entry's secrets through lookup (nil means
// os.LookupEnv) and compiles its filter and prompt template. Every problem
// is reported, each naming its key ("webhooks[ci].secret_env: $GH_SECRET
// is not set"), so a service refuses to start rather than serve a webhook
// that could never verify or render.
func Compile(entries []config.Webhook, lookup func(string) (string, bool)) (*Hooks, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	hs := &Hooks{byName: map[string]*hook{}}
	var errs []error
	fail := func(label, key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("webhooks[%s].%s: %s", label, key, fmt.Sprintf(format, args...)))
	}
	for _, e := range entries {
		h := &hook{cfg: e}
		for i, name := range e.SecretVars() {
			key := "secret_env"
			if i > 0 {
				key = "secrets_env"
			}
			v, _ := lookup(name)
			v = strings.TrimSpace(v)
			if v == "" {
				fail(e.Name, key, "$%s is not set or empty; the webhook cannot verify deliveries without its secret", name)
				continue
			}
			secret := []byte(v)
			if e.Kind == config.WebhookHMAC {
				var err error
				if secret, err = decodeStandardSecret(v); err != nil {
					fail(e.Name, key, "$%s: %v", name, err)
					continue
				}
			}
			h.secrets = append(h.secrets, secret)
			hs.raw = append(hs.raw, v)
		}
		var err error
		if h.filter, err = ParseFilter(e.Filter); err != nil {
			fail(e.Name, "filter", "%v", err)
		}
		if h.prompt, err = parsePrompt(e.Name, e.Prompt); err != nil {
			fail(e.Name, "prompt", "does not parse: %s", strings.TrimPrefix(err.Error(), "template: "))
		}
		for _, n := range e.Notify {
			h.notify = append(h.notify, store.NotifyTarget{Transport: n.Transport, Channel: n.Channel, Thread: n.Thread})
		}
		if _, dup := hs.byName[e.Name]; dup {
			fail(e.Name, "name", "is declared twice")
		}
		hs.byName[e.Name] = h
		hs.order = append(hs.order, e.Name)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return hs, nil
}

// Secrets returns every signing secret as configured, for the service to
// mask wherever output leaves the process.
func (hs *Hooks) Secrets() []string { return slices.Clone(hs.raw) }

func (h *hook) maxBody() int64 {
	if h.cfg.Kind == config.WebhookGitHub || h.cfg.Kind == config.WebhookGitLab {
		return MaxGitHubBody
	}
	return MaxBody
}

// posture is the entry's posture; the configuration refuses yolo, and this
// is the last place that could let one through.
func (h *hook) posture() policy.Posture {
	if h.cfg.Posture == policy.PostureAuto {
		return policy.PostureAuto
	}
	return policy.PostureAsk
}

// wants reports whether an event ("check_run" with action "completed")
// passes the entry's events list: an entry names the event alone or
// event.action.
func (h *hook) wants(event, action string) bool {
	if len(h.cfg.Events) == 0 {
		return true
	}
	full := event
	if action != "" {
		full = event + "." + action
	}
	return slices.Contains(h.cfg.Events, event) || slices.Contains(h.cfg.Events, full)
}
