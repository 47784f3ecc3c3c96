package config

import "testing"

func TestPublicURL(t *testing.T) {
	f := newFixture(t)
	f.user("[serve]\npublic_url = \"https://reasonix.example.com/base/\"\n")
	if got := f.load().Serve.BaseURL(); got != "https://reasonix.example.com/base" {
		t.Errorf("BaseURL = %q", got)
	}
	for _, bad := range []string{"reasonix.example.com", "ftp://x", "https://", "https://x/?a=1", "https://x/#f", "https://u:p@x", "http://[::1"} {
		f.user("[serve]\npublic_url = \"" + bad + "\"\n")
		wantContains(t, f.loadErr(), "serve.public_url")
	}
}
