package config

import (
	"strings"
	"testing"

	"reasonix/internal/posture"
)

// A schedule or webhook that can need a person and has nobody to ask is
// warned about, naming the entry and the fix; one with a notify target on
// an enabled transport, a yolo one and a disabled schedule are not.
func TestUnattendedWarnings(t *testing.T) {
	off := false
	slack := []NotifyTarget{{Transport: "slack", Channel: "C1"}}
	c := &Config{
		Bot: Bot{Slack: SlackBot{Enabled: true}},
		Schedules: []Schedule{
			{Name: "nightly", Posture: posture.Ask},
			{Name: "reported", Posture: posture.Ask, Notify: slack},
			{Name: "wild", Posture: posture.Yolo},
			{Name: "off", Posture: posture.Auto, Enabled: &off},
			{Name: "to-telegram", Posture: posture.Auto, Notify: []NotifyTarget{{Transport: "telegram", Channel: "-1"}}},
		},
		Webhooks: []Webhook{{Name: "ci", Posture: posture.Auto}, {Name: "ci-reported", Posture: posture.Ask, Notify: slack}},
	}
	got := c.UnattendedWarnings()
	want := []string{`schedule "nightly" (posture ask)`, `schedule "to-telegram" (posture auto)`, `webhook "ci" (posture auto)`}
	if len(got) != len(want) {
		t.Fatalf("warnings = %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) || !strings.Contains(got[i], "Add notify = ") {
			t.Errorf("warning %d = %q, want it to start %q and name the fix", i, got[i], w)
		}
	}
}
