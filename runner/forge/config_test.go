package forge_test

import (
	"strings"
	"testing"

	"reasonix/runner/forge"
)

func TestNewRejectsBadConfig(t *testing.T) {
	ok := forge.Config{Kind: forge.GitHub, Project: "acme/app", Token: "tok-12345678"}
	for _, tc := range []struct {
		name string
		edit func(*forge.Config)
		want string
	}{
		{"unknown kind", func(c *forge.Config) { c.Kind = "gitea" }, `unknown kind "gitea"`},
		{"no token", func(c *forge.Config) { c.Token = "" }, "no token"},
		{"token with newline", func(c *forge.Config) { c.Token = "a\r\nX-Evil: 1" }, "line break"},
		{"github project path", func(c *forge.Config) { c.Project = "acme/sub/app" }, "want owner/repo"},
		{"no project", func(c *forge.Config) { c.Project = "" }, "want owner/repo"},
		{"gitlab bare name", func(c *forge.Config) { c.Kind = forge.GitLab; c.Project = "app" }, "full path"},
		{"empty segment", func(c *forge.Config) { c.Kind = forge.GitLab; c.Project = "a//b" }, "full path"},
		{"bad scheme", func(c *forge.Config) { c.APIURL = "ftp://example.com" }, "scheme"},
		{"credentials in url", func(c *forge.Config) { c.APIURL = "https://u:pw@example.com/api/v3" }, "credentials"},
		{"query in url", func(c *forge.Config) { c.APIURL = "https://example.com/api/v3?access_token=x" }, "query"},
		{"no host", func(c *forge.Config) { c.APIURL = "https:///api/v3" }, "no host"},
		{"gitlab web url", func(c *forge.Config) { c.Kind = forge.GitLab; c.APIURL = "https://gitlab.example.com" }, "ends in /api/v4"},
		{"github web path", func(c *forge.Config) { c.APIURL = "https://ghe.example.com/acme" }, "ends in /api/v3"},
	} {
		cfg := ok
		tc.edit(&cfg)
		_, err := forge.New(cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v, want an error containing %q", tc.name, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "pw@") || strings.Contains(err.Error(), "access_token=x") {
			t.Errorf("%s: error repeats a secret: %v", tc.name, err)
		}
	}
	for _, cfg := range []forge.Config{
		ok,
		{Kind: "GitLab", Project: "group/sub/app", Token: "t"},
		{Kind: forge.GitLab, APIURL: "https://example.com/gitlab/api/v4", Project: "g/a", Token: "t"},
		{Kind: forge.GitHub, APIURL: "http://127.0.0.1:1234", Project: "a/b", Token: "t"},
		{Kind: forge.GitHub, APIURL: "https://ghe.example.com/api/v3/", Project: "a/b", Token: "t"},
	} {
		if _, err := forge.New(cfg); err != nil {
			t.Errorf("New(%+v): %v", cfg, err)
		}
	}
}
