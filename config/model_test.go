package config

import (
	"strings"
	"testing"
	"time"
)

const modelsFile = `
[[providers]]
name = "deepseek"
base_url = "https://api.deepseek.com"
models = ["flash", "pro", "shared"]
default = "pro"
api_key_env = "DEEPSEEK_API_KEY"
context_window = 128000
max_output_tokens = 8000
idle_timeout_seconds = 60
max_retries = 0
model_overrides = { flash = { context_window = 1000000 } }
prices = { pro = { input = 0.5, output = 2.0, cached_input = 0.1 } }

[[providers]]
name = "router"
kind = "custom"
request_url = "https://proxy.example.com/v1/chat"
models = ["meta/llama-3", "shared"]
max_retries = 4

[[providers]]
name = "solo"
model = "tiny"
`

func TestResolveModel(t *testing.T) {
	f := newFixture(t)
	path := f.proj(modelsFile)
	c := f.load()
	for _, tc := range []struct{ ref, provider, model string }{
		{"", "deepseek", "pro"},
		{"deepseek", "deepseek", "pro"},
		{"solo", "solo", "tiny"},
		{"router", "router", "meta/llama-3"},
		{"flash", "deepseek", "flash"},
		{"tiny", "solo", "tiny"},
		{"deepseek/shared", "deepseek", "shared"},
		{"router/shared", "router", "shared"},
		{"router/meta/llama-3", "router", "meta/llama-3"},
		{"meta/llama-3", "router", "meta/llama-3"},
	} {
		r, err := c.ResolveModel(tc.ref)
		if err != nil || r.Name != tc.provider || r.Model != tc.model {
			t.Errorf("ResolveModel(%q) = %s/%s, %v; want %s/%s", tc.ref, r.Name, r.Model, err, tc.provider, tc.model)
		}
	}

	r, _ := c.ResolveModel("deepseek/flash")
	if r.ContextWindow != 1000000 || r.MaxOutputTokens != 8000 || r.Priced {
		t.Errorf("flash: window %d output %d priced %v; want the override window and the provider's output limit",
			r.ContextWindow, r.MaxOutputTokens, r.Priced)
	}
	r, _ = c.ResolveModel("pro")
	want := ProviderRef{Name: "deepseek", Kind: "openai", BaseURL: "https://api.deepseek.com", APIKeyEnv: "DEEPSEEK_API_KEY",
		Model: "pro", ContextWindow: 128000, MaxOutputTokens: 8000, IdleTimeout: time.Minute, MaxRetries: -1,
		Price: Price{Input: 0.5, Output: 2, CachedInput: 0.1}, Priced: true, Source: path}
	if r != want {
		t.Errorf("pro = %+v\nwant  %+v", r, want)
	}
	r, _ = c.ResolveModel("router")
	if r.Kind != "custom" || r.RequestURL != "https://proxy.example.com/v1/chat" || r.MaxRetries != 4 || r.IdleTimeout != 300*time.Second {
		t.Errorf("router = %+v", r)
	}
	if r, _ := c.ResolveModel("solo"); r.MaxRetries != 0 {
		t.Errorf("unset max_retries must map to 0 (provider default), got %d", r.MaxRetries)
	}

	for _, tc := range []struct{ ref, want string }{
		{"shared", `model "shared" is offered by several providers; use one of deepseek/shared, router/shared`},
		{"nope", `unknown model "nope" (known: deepseek, deepseek/flash, deepseek/pro, deepseek/shared, router, router/meta/llama-3, router/shared, solo, solo/tiny)`},
		{"solo/huge", `provider "solo" has no model "huge" (models: tiny)`},
	} {
		_, err := c.ResolveModel(tc.ref)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ResolveModel(%q) error = %v, want %q", tc.ref, err, tc.want)
		}
	}
}

func TestResolveModelDefaultModel(t *testing.T) {
	f := newFixture(t)
	f.proj("default_model = \"flash\"\n" + modelsFile)
	c := f.load()
	if r, err := c.ResolveModel(""); err != nil || r.Name != "deepseek" || r.Model != "flash" {
		t.Errorf("ResolveModel(\"\") = %s/%s, %v; want deepseek/flash", r.Name, r.Model, err)
	}
	f.proj("default_model = \"shared\"\n" + modelsFile)
	wantContains(t, f.loadErr(), `default_model: model "shared" is offered by several providers`)
}
