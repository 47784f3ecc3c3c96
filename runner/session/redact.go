package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/internal/redact"
	"reasonix/internal/secretenv"
)

// Secrets lists every secret value the configuration gives this process:
// the providers' keys, the store DSN, the API token (from its variable or
// the generated token file), and the plugins' environment and header
// values (which are where ${VAR} credentials end up).
func Secrets(set *config.Config) []string {
	var out []string
	for name := range secretVars(set) {
		if v := secretenv.Getenv(name); v != "" {
			out = append(out, v)
		}
	}
	if dir := set.DataDir(); dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, "api-token")); err == nil {
			out = append(out, strings.TrimSpace(string(b)))
		}
	}
	out = append(out, secretenv.Values()...)
	for _, p := range set.Plugins {
		for _, v := range p.Env {
			out = append(out, v)
		}
		for _, v := range p.Headers {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(v, "Bearer "), "token "), v)
		}
	}
	return out
}

// redactedTool masks secrets in what a tool returns, so no secret the
// process knows reaches the model, the transcript, the journal or an event
// through a tool's output (a plugin echoing its token, a file holding a key
// the analyser could not foresee).
type redactedTool struct {
	agent.Tool
	r *redact.Redactor
}

func (t redactedTool) ReadOnly() bool { return agent.IsReadOnly(t.Tool) }

func (t redactedTool) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	out, err := t.Tool.Execute(ctx, args)
	if err != nil {
		if msg := t.r.String(err.Error()); msg != err.Error() {
			err = &maskedError{msg: msg, err: err}
		}
	}
	return t.r.String(out), err
}

// maskedError shows a tool error with its secrets masked while keeping
// the error itself for errors.Is (a cancelled command stays cancelled).
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// redactTools wraps every tool of reg.
func redactTools(reg *agent.ToolRegistry, r *redact.Redactor) (*agent.ToolRegistry, error) {
	out := agent.NewToolRegistry()
	for _, name := range reg.Names() {
		t, _ := reg.Get(name)
		if err := out.Add(redactedTool{Tool: t, r: r}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
