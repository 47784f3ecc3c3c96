package config

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Provider is one [[providers]] entry: a vendor endpoint (one base URL and
// key) offering one or more models. It declares either Model or Models (with
// an optional Default).
type Provider struct {
	Name       string   `toml:"name"`        // required, unique; used in model references
	Kind       string   `toml:"kind"`        // provider registry kind: "openai" (default), "anthropic", "responses"; checked by the caller's registry, which lists the kinds it knows
	BaseURL    string   `toml:"base_url"`    // ${VAR} expanded
	RequestURL string   `toml:"request_url"` // exact request target, overrides BaseURL; ${VAR} expanded
	Model      string   `toml:"model"`       // single-model form
	Models     []string `toml:"models"`      // multi-model form
	Default    string   `toml:"default"`     // with Models: the default model; "" = Models[0]
	APIKeyEnv  string   `toml:"api_key_env"` // NAME of the variable holding the key; "" = no auth
	// ChatURL is the legacy spelling of RequestURL for OpenAI-compatible
	// providers (seed §3.1): Load moves it to RequestURL when that is unset;
	// on other kinds it is ignored with a warning.
	ChatURL string `toml:"chat_url"`
	// Effort is the reasoning effort of this provider's requests (one of
	// Efforts; "" = the model's default), mapped to the provider's wire.
	Effort string `toml:"effort"`

	ContextWindow      int  `toml:"context_window"`       // tokens; unset = DefaultContextWindow(kind), 0 = compaction off
	IdleTimeoutSeconds int  `toml:"idle_timeout_seconds"` // stream idle watchdog; 0 or unset = 300
	MaxOutputTokens    int  `toml:"max_output_tokens"`    // 0 = the provider's automatic choice
	MaxRetries         *int `toml:"max_retries"`          // nil = the provider's default; 0 = never retry
	// MaxOutputBytes bounds one answer's text and tool calls, MaxStreamBytes
	// one response body; 0 = the provider's default (1 MiB, 64 MiB). A
	// runaway model must not fill the service's memory.
	MaxOutputBytes int `toml:"max_output_bytes"`
	MaxStreamBytes int `toml:"max_stream_bytes"`
	// Vision says the provider's models take images (view_image shows the
	// model a picture only then). Unset: true for "anthropic" and
	// "responses", whose models do; false for "openai", whose compatible
	// servers often front text-only models (DeepSeek, many local ones).
	Vision *bool `toml:"vision"`

	ModelOverrides map[string]ModelOverride `toml:"model_overrides"` // keyed by model ID
	Prices         map[string]Price         `toml:"prices"`          // keyed by model ID

	// Source is the file that declared the entry ("" if built in code).
	Source string `toml:"-"`
	// windowSet records that the file wrote context_window itself, so an
	// explicit 0 (compaction off) is not replaced by the kind's default.
	windowSet bool
}

// TakesImages resolves Vision: the value set, else the kind's default.
func (p *Provider) TakesImages() bool {
	if p.Vision != nil {
		return *p.Vision
	}
	return p.Kind == "anthropic" || p.Kind == "responses"
}

// ModelOverride replaces provider-wide limits for one model. Zero fields do
// not override.
type ModelOverride struct {
	ContextWindow   int `toml:"context_window"`
	MaxOutputTokens int `toml:"max_output_tokens"`
}

// Price is what a model costs, in USD per million tokens.
type Price struct {
	Input       float64 `toml:"input"`
	Output      float64 `toml:"output"`
	CachedInput float64 `toml:"cached_input"`
}

const defaultIdleTimeoutSeconds = 300

// DefaultModel is the model a bare reference to the provider selects.
func (p *Provider) DefaultModel() string {
	switch {
	case p.Model != "":
		return p.Model
	case p.Default != "":
		return p.Default
	case len(p.Models) > 0:
		return p.Models[0]
	}
	return ""
}

// ModelList is every model the provider declares, in declaration order.
func (p *Provider) ModelList() []string {
	if p.Model != "" {
		return []string{p.Model}
	}
	return slices.Clone(p.Models)
}

// IdleTimeout is the stream idle watchdog as a duration.
func (p *Provider) IdleTimeout() time.Duration {
	return time.Duration(cmp.Or(p.IdleTimeoutSeconds, defaultIdleTimeoutSeconds)) * time.Second
}

func (p *Provider) applyDefaults() {
	if p.Kind == "" {
		p.Kind = "openai"
	}
	if p.IdleTimeoutSeconds == 0 {
		p.IdleTimeoutSeconds = defaultIdleTimeoutSeconds
	}
	if p.ContextWindow == 0 && !p.windowSet {
		p.ContextWindow = DefaultContextWindow(p.Kind)
	}
}

func (p *Provider) validate(label string, pr *problems) {
	src := p.Source
	if p.Name == "" {
		pr.add(src, label+".name", "is required")
	} else if !validEntryName(p.Name) {
		pr.add(src, label+".name", "%q must start with a letter or digit and contain only letters, digits, '.', '_' or '-'", p.Name)
	}
	switch {
	case p.Model != "" && len(p.Models) > 0:
		pr.add(src, label, "set either model or models, not both")
	case p.Model == "" && len(p.Models) == 0:
		pr.add(src, label, "declare model = \"...\" or models = [\"...\"]")
	case p.Model != "" && p.Default != "":
		pr.add(src, label+".default", "only applies with models = [...]; use model = %q alone", p.Model)
	}
	seen := map[string]bool{}
	for i, m := range p.Models {
		switch {
		case m == "":
			pr.add(src, fmt.Sprintf("%s.models[%d]", label, i), "must not be empty")
		case seen[m]:
			pr.add(src, fmt.Sprintf("%s.models[%d]", label, i), "%q is listed twice", m)
		}
		seen[m] = true
	}
	if p.Default != "" && len(p.Models) > 0 && !seen[p.Default] {
		pr.add(src, label+".default", "%q is not in models %q", p.Default, p.Models)
	}
	checkURL(pr, src, label+".base_url", p.BaseURL)
	checkURL(pr, src, label+".request_url", p.RequestURL)
	checkURL(pr, src, label+".chat_url", p.ChatURL)
	checkEffort(pr, src, label+".effort", p.Effort)
	checkEnvName(pr, src, label+".api_key_env", p.APIKeyEnv)
	checkNonNegative(pr, src, label+".context_window", p.ContextWindow)
	checkNonNegative(pr, src, label+".idle_timeout_seconds", p.IdleTimeoutSeconds)
	checkNonNegative(pr, src, label+".max_output_tokens", p.MaxOutputTokens)
	checkNonNegative(pr, src, label+".max_output_bytes", p.MaxOutputBytes)
	checkNonNegative(pr, src, label+".max_stream_bytes", p.MaxStreamBytes)
	if p.MaxOutputBytes > 0 && p.MaxStreamBytes > 0 && p.MaxStreamBytes < p.MaxOutputBytes {
		pr.add(src, label+".max_stream_bytes", "must be at least max_output_bytes (%d), got %d", p.MaxOutputBytes, p.MaxStreamBytes)
	}
	if p.MaxRetries != nil && (*p.MaxRetries < 0 || *p.MaxRetries > 100) {
		pr.add(src, label+".max_retries", "must be between 0 and 100 (got %d)", *p.MaxRetries)
	}
	known := p.ModelList()
	for _, m := range sortedKeys(p.ModelOverrides) {
		o := p.ModelOverrides[m]
		field := fmt.Sprintf("%s.model_overrides.%q", label, m)
		if !slices.Contains(known, m) {
			pr.add(src, field, "%q is not a model of this provider (models: %q)", m, known)
		}
		checkNonNegative(pr, src, field+".context_window", o.ContextWindow)
		checkNonNegative(pr, src, field+".max_output_tokens", o.MaxOutputTokens)
	}
	for _, m := range sortedKeys(p.Prices) {
		price := p.Prices[m]
		field := fmt.Sprintf("%s.prices.%q", label, m)
		if !slices.Contains(known, m) {
			pr.add(src, field, "%q is not a model of this provider (models: %q)", m, known)
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"input", price.Input}, {"output", price.Output}, {"cached_input", price.CachedInput}} {
			if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				pr.add(src, field+"."+f.name, "must be a non-negative number of USD per million tokens")
			}
		}
	}
}
