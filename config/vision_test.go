package config

import "testing"

// TestProviderVision: vision follows the file, else the kind (anthropic
// and responses models take images; an OpenAI-compatible server may not).
func TestProviderVision(t *testing.T) {
	f := newFixture(t)
	f.proj(`
[[providers]]
name = "deepseek"
model = "chat"

[[providers]]
name = "claude"
kind = "anthropic"
model = "sonnet"

[[providers]]
name = "gpt"
kind = "responses"
model = "gpt-5"

[[providers]]
name = "local"
model = "llava"
vision = true

[[providers]]
name = "textonly"
kind = "anthropic"
model = "old"
vision = false
`)
	c := f.load()
	for ref, want := range map[string]bool{"deepseek": false, "claude": true, "gpt": true, "local": true, "textonly": false} {
		r, err := c.ResolveModel(ref)
		if err != nil {
			t.Fatal(err)
		}
		if r.Vision != want {
			t.Errorf("%s: vision %v, want %v", ref, r.Vision, want)
		}
	}
}
