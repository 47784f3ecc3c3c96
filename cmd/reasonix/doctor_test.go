package main

import (
	"testing"

	"reasonix/config"
)

func TestModelsURL(t *testing.T) {
	cases := []struct {
		ref  config.ProviderRef
		want string
	}{
		{config.ProviderRef{BaseURL: "https://api.deepseek.com/v1/"}, "https://api.deepseek.com/v1/models"},
		{config.ProviderRef{}, "https://api.openai.com/v1/models"},
		{config.ProviderRef{RequestURL: "http://127.0.0.1:11434/v1/chat/completions"}, "http://127.0.0.1:11434/v1/models"},
		{config.ProviderRef{RequestURL: "http://gw.local/llm"}, "http://gw.local/llm"},
		{config.ProviderRef{Kind: "anthropic"}, "https://api.anthropic.com/v1/models"},
		{config.ProviderRef{Kind: "anthropic", RequestURL: "http://gw.local/v1/messages"}, "http://gw.local/v1/models"},
		{config.ProviderRef{Kind: "responses", BaseURL: "https://api.openai.com/v1"}, "https://api.openai.com/v1/models"},
		{config.ProviderRef{Kind: "responses", RequestURL: "http://gw.local/v1/responses"}, "http://gw.local/v1/models"},
	}
	for _, c := range cases {
		if got := modelsURL(c.ref); got != c.want {
			t.Errorf("modelsURL(%+v) = %q, want %q", c.ref, got, c.want)
		}
	}
}
