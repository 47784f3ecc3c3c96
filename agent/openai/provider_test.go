package openai

import (
	"slices"
	"strings"
	"testing"
	"time"

	"reasonix/agent"
)

func TestNewValidatesAndDefaults(t *testing.T) {
	p, err := New(agent.ProviderConfig{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.CloseIdleConnections()
	if p.client.URL != "https://api.openai.com/v1/chat/completions" || p.client.Prefix != Kind || p.Name() != "openai" {
		t.Fatalf("defaults: target %q prefix %q name %q", p.client.URL, p.client.Prefix, p.Name())
	}
	p2, err := New(agent.ProviderConfig{Name: "ds", Model: "m", BaseURL: "https://api.deepseek.com/", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p2.client.URL != "https://api.deepseek.com/chat/completions" || p2.client.MaxRetries != 0 || p2.Name() != "ds" {
		t.Fatalf("target %q retries %d name %q", p2.client.URL, p2.client.MaxRetries, p2.Name())
	}

	bad := []struct {
		cfg  agent.ProviderConfig
		want string
	}{
		{agent.ProviderConfig{}, "model is required"},
		{agent.ProviderConfig{Model: "m", BaseURL: "ftp://x/v1"}, "base_url"},
		{agent.ProviderConfig{Model: "m", BaseURL: "api.openai.com/v1"}, "base_url"},
		{agent.ProviderConfig{Model: "m", RequestURL: "/relative"}, "request_url"},
		{agent.ProviderConfig{Model: "m", BaseURL: "https://user:hunter2@x/v1x", RequestURL: "file:///etc"}, "request_url"},
		{agent.ProviderConfig{Model: "m", APIKey: "sk-abc\n"}, "control characters"},
		{agent.ProviderConfig{Model: "m", IdleTimeout: -time.Second}, "idle timeout"},
	}
	for _, b := range bad {
		_, err := New(b.cfg)
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.HasPrefix(err.Error(), "openai: ") {
			t.Errorf("New(%+v) = %v, want an error about %q", b.cfg, err, b.want)
		}
		if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "sk-abc")) {
			t.Errorf("error leaks a secret: %v", err)
		}
	}
	if _, err := New(agent.ProviderConfig{Model: "m", BaseURL: "http://u:hunter2@x y/"}); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("unparsable URL: %v", err)
	}
}

func TestRegisteredAsOpenAI(t *testing.T) {
	if !slices.Contains(agent.Providers.Kinds(), Kind) {
		t.Fatalf("kind %q is not registered; known: %v", Kind, agent.Providers.Kinds())
	}
	prov, err := agent.Providers.New(agent.ProviderConfig{Name: "x", Kind: Kind, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := prov.(*Provider)
	if !ok {
		t.Fatalf("registry built %T", prov)
	}
	p.CloseIdleConnections()
	prov, err = agent.Providers.New(agent.ProviderConfig{Name: "x", Kind: Kind})
	if err == nil || prov != nil {
		t.Fatalf("invalid config: provider %v (non-nil interface?), err %v", prov, err)
	}
}

func TestParseErrorBodyShapes(t *testing.T) {
	tests := map[string]string{
		`{"error":{"message":"bad model","type":"invalid_request_error","code":"model_not_found"}}`: "bad model",
		`{"error":"plain string"}`:             "plain string",
		`{"message":"top level"}`:              "top level",
		`<html>502 Bad Gateway</html>`:         "<html>502 Bad Gateway</html>",
		`{"error":{"message":"x","code":400}}`: "x",
	}
	for body, want := range tests {
		if got := parseErrorBody([]byte(body)).Message; got != want {
			t.Errorf("%s: got %q, want %q", body, got, want)
		}
	}
	if c := parseErrorBody([]byte(`{"error":{"message":"x","code":400}}`)).code(); c != "400" {
		t.Errorf("numeric code = %q", c)
	}
}

func TestStatusClass(t *testing.T) {
	tests := []struct {
		status int
		err    apiError
		want   error
	}{
		{429, apiError{Message: "Rate limit reached"}, agent.ErrRateLimited},
		{429, apiError{Message: "You exceeded your current quota", Code: []byte(`"insufficient_quota"`)}, agent.ErrRejected},
		{408, apiError{}, agent.ErrTransient},
		{409, apiError{}, agent.ErrTransient},
		{500, apiError{}, agent.ErrTransient},
		{529, apiError{Message: "overloaded"}, agent.ErrTransient},
		{400, apiError{Message: "bad"}, agent.ErrRejected},
		{401, apiError{}, agent.ErrRejected},
		{403, apiError{}, agent.ErrRejected},
		{404, apiError{Message: "model not found"}, agent.ErrRejected},
		{413, apiError{}, agent.ErrContextTooLong},
		{400, apiError{Code: []byte(`"context_length_exceeded"`)}, agent.ErrContextTooLong},
		{400, apiError{Message: "This model's maximum context length is 65536 tokens."}, agent.ErrContextTooLong},
		{400, apiError{Message: "too many tokens in request"}, agent.ErrContextTooLong},
	}
	for _, tt := range tests {
		if got := statusClass(tt.status, tt.err); got != tt.want {
			t.Errorf("statusClass(%d, %+v) = %v, want %v", tt.status, tt.err, got, tt.want)
		}
	}
}
