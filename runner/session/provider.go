package session

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/internal/secretenv"
)

// Model is a resolved model: the provider to stream from, the model name to
// request, the bound on one answer's tokens (0: the provider's default) and
// its context window in tokens (0: never compact).
type Model struct {
	Provider      agent.Provider
	Name          string
	MaxTokens     int
	ContextWindow int
	// Effort is the provider's configured reasoning effort ("" = none).
	Effort string
	// Vision says the model takes images: view_image is in its runs.
	Vision bool
}

// ResolveModel resolves a model reference ("" = the configured default) and
// builds its provider. A missing API key is reported before anything runs,
// naming the variable; every error is one a person can act on.
func ResolveModel(set *config.Config, modelRef string) (Model, error) {
	ref, err := set.ResolveModel(modelRef)
	if err != nil {
		if errors.Is(err, config.ErrNoProviders) {
			home := set.Home()
			if home == "" {
				home = "~/.reasonix"
			}
			return Model{}, fmt.Errorf("no model is configured: add a [[providers]] entry to ./reasonix.toml or %s (see reasonix.example.toml)",
				filepath.Join(home, config.UserFile))
		}
		return Model{}, err
	}
	var key string
	if ref.APIKeyEnv != "" {
		v, ok := secretenv.Lookup(ref.APIKeyEnv)
		if !ok || strings.TrimSpace(v) == "" {
			return Model{}, fmt.Errorf("provider %q needs its API key in $%s, which is not set (%s)", ref.Name, ref.APIKeyEnv, ref.Source)
		}
		key = strings.TrimSpace(v)
	}
	p, err := agent.Providers.New(agent.ProviderConfig{
		Name:           ref.Name,
		Kind:           ref.Kind,
		BaseURL:        ref.BaseURL,
		RequestURL:     ref.RequestURL,
		Model:          ref.Model,
		APIKey:         key,
		ContextWindow:  ref.ContextWindow,
		IdleTimeout:    ref.IdleTimeout,
		MaxRetries:     ref.MaxRetries,
		MaxOutputBytes: ref.MaxOutputBytes,
		MaxStreamBytes: ref.MaxStreamBytes,
	})
	if err != nil {
		return Model{}, fmt.Errorf("%w (%s)", err, ref.Source)
	}
	return Model{Provider: p, Name: ref.Model, MaxTokens: ref.MaxOutputTokens, ContextWindow: ref.ContextWindow, Effort: ref.Effort,
		Vision: ref.Vision}, nil
}
