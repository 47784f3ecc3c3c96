package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"reasonix/config"
	"reasonix/internal/secretenv"
	"reasonix/policy"
	"reasonix/runner/forge"
	"reasonix/runner/session"
)

// doctor is `reasonix doctor`: check everything a run or the service
// needs and say what to fix. It exits 1 when a check failed.
func doctor(file string, stdout, _ io.Writer) error {
	d := &checklist{w: stdout}
	cfg, err := config.Load(config.LoadOptions{File: file})
	if err != nil {
		// Each of the file's problems on its own line, then what can be
		// checked without the file.
		for _, p := range problemsOf(err) {
			d.fail("config", p)
		}
		for _, c := range fileFreeChecks() {
			switch {
			case c.err != nil:
				d.fail(c.what, c.err.Error())
			case c.warn != "":
				d.warn(c.what, c.warn)
			default:
				d.ok(c.what, c.ok)
			}
		}
		return d.result()
	}
	d.ok("config", fmt.Sprintf("%d file(s) read: %v", len(cfg.Sources()), cfg.Sources()))
	for _, w := range cfg.UnattendedWarnings() {
		d.warn("unattended", w)
	}

	if _, err := buildPolicy(cfg); err != nil {
		d.fail("permissions", err.Error())
	} else {
		d.ok("permissions", fmt.Sprintf("mode %s, posture %s, %d allow / %d ask / %d deny rules",
			cfg.Permissions.Mode, cfg.Permissions.Posture, len(cfg.Permissions.Allow), len(cfg.Permissions.Ask), len(cfg.Permissions.Deny)))
	}

	// The rest of the rules serve starts by (see configRules); permissions,
	// the sandbox and workspaces have their own, more detailed lines.
	for _, r := range configRules(nil) {
		switch r.what {
		case "permissions", "sandbox", "workspaces":
			continue
		}
		if err := r.check(cfg); err != nil {
			for _, p := range problemsOf(err) { // each on its own line
				d.fail(r.what, p)
			}
		} else {
			d.ok(r.what, "passes serve's start-up check")
		}
	}

	ref, err := cfg.ResolveModel("")
	switch {
	case err != nil:
		d.fail("model", err.Error())
	case ref.APIKeyEnv != "" && secretenv.Getenv(ref.APIKeyEnv) == "":
		d.fail("model", fmt.Sprintf("%s/%s: $%s is not set", ref.Name, ref.Model, ref.APIKeyEnv))
	default:
		d.ok("model", fmt.Sprintf("%s/%s (key in $%s)", ref.Name, ref.Model, cmpString(ref.APIKeyEnv, "none")))
		d.reachable(ref)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if st, err := openStore(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		d.fail("store", err.Error())
	} else {
		if v, err := st.SchemaVersion(ctx); err != nil {
			d.fail("store", err.Error())
		} else {
			d.ok("store", fmt.Sprintf("%s, schema version %d", st.Driver(), v))
		}
		st.Close()
	}

	if _, err := exec.LookPath("git"); err != nil {
		d.fail("git", "git is not on PATH: workspaces need it")
	} else {
		d.ok("git", "found")
		d.workspaces(cfg)
	}
	verifyPublish(ctx, cfg, func(ws string, id forge.Identity, err error) {
		if err != nil {
			d.fail("publish", fmt.Sprintf("workspace %s: %v", ws, err))
			return
		}
		d.ok("publish", fmt.Sprintf("workspace %s: %s as %s", ws, id.Project, cmpString(id.User, "the token's app")))
	})
	d.sandbox(cfg)
	return d.result()
}

type checklist struct {
	w      io.Writer
	failed int
}

func (d *checklist) ok(what, msg string)   { fmt.Fprintf(d.w, "ok    %-12s %s\n", what, msg) }
func (d *checklist) warn(what, msg string) { fmt.Fprintf(d.w, "warn  %-12s %s\n", what, msg) }
func (d *checklist) fail(what, msg string) {
	d.failed++
	fmt.Fprintf(d.w, "FAIL  %-12s %s\n", what, msg)
}

func (d *checklist) result() error {
	if d.failed > 0 {
		return fmt.Errorf("doctor: %d check(s) failed", d.failed)
	}
	return nil
}

// reachable asks the provider's endpoint for its model list, with the key
// when one is configured. Any 4xx fails: 401/403 is a rejected key, 404
// usually a wrong base_url, and a run would fail the same way.
func (d *checklist) reachable(ref config.ProviderRef) {
	target := modelsURL(ref)
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		d.fail("endpoint", fmt.Sprintf("%s: %v", target, err))
		return
	}
	if ref.APIKeyEnv != "" {
		setKey(req.Header, ref.Kind, strings.TrimSpace(secretenv.Getenv(ref.APIKeyEnv)))
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		d.fail("endpoint", fmt.Sprintf("%s is not reachable: %v", target, err))
		return
	}
	resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusMethodNotAllowed && target == ref.RequestURL:
		d.ok("endpoint", fmt.Sprintf("%s answered HTTP 405 to GET: it is there", target))
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		d.fail("endpoint", fmt.Sprintf("%s answered HTTP %d: the provider rejected the key in $%s", target, code, ref.APIKeyEnv))
	case code == http.StatusNotFound:
		d.fail("endpoint", fmt.Sprintf("%s answered HTTP 404: check base_url (or request_url) of provider %q", target, ref.Name))
	case code >= 400 && code < 500:
		d.fail("endpoint", fmt.Sprintf("%s answered HTTP %d", target, code))
	case code >= 500:
		d.warn("endpoint", fmt.Sprintf("%s answered HTTP %d: the provider has trouble right now", target, code))
	default:
		d.ok("endpoint", fmt.Sprintf("%s answered HTTP %d", target, code))
	}
}

// modelsURL is the model list next to the provider's request endpoint: a
// cheap authenticated request that costs no tokens. Every kind we ship has
// one (OpenAI-compatible servers at /models, Anthropic at /v1/models). A
// request_url of another shape is probed itself.
func modelsURL(ref config.ProviderRef) string {
	endpoint, base, models := "/chat/completions", "https://api.openai.com/v1", "/models"
	switch ref.Kind {
	case "anthropic":
		endpoint, base, models = "/v1/messages", "https://api.anthropic.com", "/v1/models"
	case "responses":
		endpoint = "/responses"
	}
	if ref.RequestURL != "" {
		if root, ok := strings.CutSuffix(ref.RequestURL, endpoint); ok {
			return root + models
		}
		return ref.RequestURL
	}
	return strings.TrimRight(cmpString(ref.BaseURL, base), "/") + models
}

// setKey authenticates a probe the way the provider kind does.
func setKey(h http.Header, kind, key string) {
	if kind == "anthropic" {
		h.Set("X-Api-Key", key)
		h.Set("Anthropic-Version", "2023-06-01")
		return
	}
	h.Set("Authorization", "Bearer "+key)
}

// workspaces checks every [[workspaces]] entry, one line each.
func (d *checklist) workspaces(cfg *config.Config) {
	for _, ws := range cfg.Workspaces {
		if err := ws.CheckReachable(context.Background()); err != nil {
			d.fail("workspace", err.Error())
		} else {
			d.ok("workspace", fmt.Sprintf("%s: %s (%s)", ws.Name, ws.Repo, ws.Base))
		}
	}
}

// sandbox reports which OS sandbox bash runs in, and whether that is
// what the configuration asks for.
func (d *checklist) sandbox(cfg *config.Config) {
	kind, warning, err := session.SandboxStatus(cfg)
	switch {
	case err != nil:
		d.fail("sandbox", err.Error())
	case kind != "" && warning != "":
		d.warn("sandbox", fmt.Sprintf("bash runs in the %s sandbox, but %s", kind, warning))
	case kind != "" && !policy.PidfdGetfdWorks():
		// The supervisor works but cannot take a caller's socket: it
		// refuses every connect and send rather than check and continue.
		d.warn("sandbox", fmt.Sprintf("bash runs in the %s sandbox, but pidfd_getfd is refused here (a container's seccomp profile?): every connect and send of sandboxed bash fails with EACCES; allow pidfd_getfd (docs/SPEC.md §7.1)", kind))
	case kind != "":
		d.ok("sandbox", fmt.Sprintf("bash runs in the %s sandbox ([sandbox] bash = %q; the supervisor takes sockets with pidfd_getfd)", kind, cmpString(cfg.Sandbox.Bash, config.BashAuto)))
	case cfg.Sandbox.Bash == config.BashRequire || cfg.Sandbox.Bash == config.BashEnforce:
		d.fail("sandbox", warning)
	default:
		d.warn("sandbox", warning)
	}
}
