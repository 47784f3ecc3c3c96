package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCheckRefusesAScheduleTheIntakeWould: a schedule whose runs the
// intake would refuse — a prompt over the intake's bound, or a goal's
// over the goal's — is refused by `config
// check` and by serve's start-up checks with the intake's own reason, not
// first by runner.New when serve has already said the file is good.
func TestConfigCheckRefusesAScheduleTheIntakeWould(t *testing.T) {
	home := t.TempDir()
	t.Setenv("REASONIX_HOME", home)
	t.Setenv("REASONIX_CONFIG", "")
	t.Setenv("RX_AGREE_KEY", "sk-agree")
	t.Setenv("RX_AGREE_HOOK", "hook-secret")
	t.Setenv("RX_AGREE_SLACK_BOT", "xoxb-1")
	t.Setenv("RX_AGREE_SLACK_APP", "xapp-1")
	t.Setenv("RX_AGREE_TG", "123:tg")
	t.Setenv("RX_AGREE_API", "api-secret")
	base := agreeBase(t)
	delete(base, "workspaces.name")
	delete(base, "workspaces.repo")
	delete(base, "workspaces.base")
	for i, c := range []struct {
		name string
		set  map[string]string
		want string
	}{
		{"goal prompt", map[string]string{"schedules.goal": "true", "schedules.prompt": fmt.Sprintf("%q", strings.Repeat("x", 20<<10))}, "a goal's prompt is 20480 bytes"},
		{"prompt", map[string]string{"schedules.prompt": fmt.Sprintf("%q", strings.Repeat("x", 101<<10))}, "the prompt is 103424 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := maps.Clone(base)
			maps.Copy(doc, c.set)
			file := filepath.Join(t.TempDir(), fmt.Sprintf("%d.toml", i))
			if err := os.WriteFile(file, []byte(agreeTOML(doc)), 0o600); err != nil {
				t.Fatal(err)
			}
			cc := configCheck(file, io.Discard, io.Discard)
			_, serve := loadCheckedServiceConfig(file)
			for what, err := range map[string]error{"config check": cc, "serve": serve} {
				if err == nil || !strings.Contains(err.Error(), "schedule nightly") || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %v, want a refusal of schedule nightly naming %q", what, err, c.want)
				}
			}
		})
	}
}
