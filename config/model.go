package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ProviderRef is a model reference resolved against the providers: the
// provider entry's settings with per-model overrides applied, and the model.
type ProviderRef struct {
	Name            string // provider instance name
	Kind            string // provider registry kind
	BaseURL         string
	RequestURL      string
	APIKeyEnv       string // NAME of the variable holding the key; "" = no auth
	Model           string
	ContextWindow   int // model_overrides.<model>.context_window when set, else the provider's; 0 = compaction off
	MaxOutputTokens int // model_overrides.<model>.max_output_tokens when set, else the provider's; 0 = automatic
	IdleTimeout     time.Duration
	// MaxRetries follows agent.ProviderConfig: 0 = the provider's default,
	// negative = never retry (max_retries = 0 in the file).
	MaxRetries int
	// MaxOutputBytes and MaxStreamBytes bound one answer and one response
	// body; 0 = the provider's default.
	MaxOutputBytes int
	MaxStreamBytes int
	// Effort is the provider's reasoning effort ("" = the model's default).
	Effort string
	// Vision says the model takes images (Provider.TakesImages).
	Vision bool
	Price  Price // zero unless Priced
	Priced bool  // a prices entry exists for the model
	Source string
}

// ResolveModel resolves ref to a provider and model. ref is a provider name
// (its default model), "provider/model", or a model name that exactly one
// provider declares; "" means DefaultModel, and an empty DefaultModel means
// the first provider's default. An ambiguous model name is an error listing
// the candidates; an unknown ref is an error listing the known names. With
// no providers at all the error wraps ErrNoProviders.
func (c *Config) ResolveModel(ref string) (ProviderRef, error) {
	if len(c.Providers) == 0 {
		return ProviderRef{}, fmt.Errorf("%w: add a [[providers]] entry to reasonix.toml or %s",
			ErrNoProviders, "~/.reasonix/config.toml")
	}
	if ref == "" {
		ref = c.DefaultModel
	}
	if ref == "" {
		p := &c.Providers[0]
		return p.ref(p.DefaultModel()), nil
	}
	for i := range c.Providers {
		if c.Providers[i].Name == ref {
			p := &c.Providers[i]
			return p.ref(p.DefaultModel()), nil
		}
	}
	// "provider/model" is tried before bare model names because model IDs
	// often contain a slash themselves ("meta-llama/llama-3").
	if name, model, ok := strings.Cut(ref, "/"); ok {
		for i := range c.Providers {
			p := &c.Providers[i]
			if p.Name != name {
				continue
			}
			if slices.Contains(p.ModelList(), model) {
				return p.ref(model), nil
			}
			return ProviderRef{}, fmt.Errorf("config: provider %q has no model %q (models: %s)",
				name, model, strings.Join(p.ModelList(), ", "))
		}
	}
	var matches []*Provider
	for i := range c.Providers {
		if slices.Contains(c.Providers[i].ModelList(), ref) {
			matches = append(matches, &c.Providers[i])
		}
	}
	switch len(matches) {
	case 1:
		return matches[0].ref(ref), nil
	case 0:
		return ProviderRef{}, fmt.Errorf("config: unknown model %q (known: %s)", ref, strings.Join(c.knownRefs(), ", "))
	}
	candidates := make([]string, len(matches))
	for i, p := range matches {
		candidates[i] = p.Name + "/" + ref
	}
	return ProviderRef{}, fmt.Errorf("config: model %q is offered by several providers; use one of %s",
		ref, strings.Join(candidates, ", "))
}

// knownRefs lists every provider name and provider/model pair.
func (c *Config) knownRefs() []string {
	var refs []string
	for i := range c.Providers {
		p := &c.Providers[i]
		refs = append(refs, p.Name)
		for _, m := range p.ModelList() {
			refs = append(refs, p.Name+"/"+m)
		}
	}
	return refs
}

func (p *Provider) ref(model string) ProviderRef {
	r := ProviderRef{
		Name:            p.Name,
		Kind:            p.Kind,
		BaseURL:         p.BaseURL,
		RequestURL:      p.RequestURL,
		APIKeyEnv:       p.APIKeyEnv,
		Model:           model,
		ContextWindow:   p.ContextWindow,
		MaxOutputTokens: p.MaxOutputTokens,
		IdleTimeout:     p.IdleTimeout(),
		MaxOutputBytes:  p.MaxOutputBytes,
		MaxStreamBytes:  p.MaxStreamBytes,
		Effort:          p.Effort,
		Vision:          p.TakesImages(),
		Source:          p.Source,
	}
	if o, ok := p.ModelOverrides[model]; ok {
		if o.ContextWindow > 0 {
			r.ContextWindow = o.ContextWindow
		}
		if o.MaxOutputTokens > 0 {
			r.MaxOutputTokens = o.MaxOutputTokens
		}
	}
	if p.MaxRetries != nil {
		r.MaxRetries = *p.MaxRetries
		if r.MaxRetries == 0 {
			r.MaxRetries = -1
		}
	}
	r.Price, r.Priced = p.Prices[model]
	return r
}
