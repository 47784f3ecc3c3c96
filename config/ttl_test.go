package config

import (
	"strings"
	"testing"
	"time"
)

// approval_ttl = "none" is accepted wherever approval_ttl is: the
// service's default and each route, schedule and webhook; a duration
// still reads as one.
func TestApprovalTTLNone(t *testing.T) {
	f := newFixture(t)
	f.user("[runner]\napproval_ttl = \"none\"\n" +
		"[bot]\napproval_remind = \"2h\"\n" +
		"[[bot.routes]]\ntransport = \"slack\"\nchannel = \"C1\"\napproval_ttl = \"none\"\n" +
		"[[bot.routes]]\ntransport = \"slack\"\nchannel = \"C2\"\napproval_ttl = \"45m\"\n" +
		"[[schedules]]\nname = \"s\"\ncron = \"@daily\"\nprompt = \"p\"\napproval_ttl = \"none\"\n" +
		okHook + "approval_ttl = \"none\"\n")
	c := f.load()
	if !c.Runner.ApprovalTTL.None() || c.Runner.ApprovalTTL.Duration() != 0 || c.Runner.ApprovalTTL.String() != "none" {
		t.Errorf("[runner] approval_ttl = %v", c.Runner.ApprovalTTL)
	}
	if !c.Bot.Routes[0].ApprovalTTL.None() || c.Bot.Routes[1].ApprovalTTL.Duration() != 45*time.Minute {
		t.Errorf("routes' approval_ttl = %v, %v", c.Bot.Routes[0].ApprovalTTL, c.Bot.Routes[1].ApprovalTTL)
	}
	if !c.Schedules[0].ApprovalTTL.None() || !c.Webhooks[0].ApprovalTTL.None() {
		t.Errorf("schedule %v, webhook %v", c.Schedules[0].ApprovalTTL, c.Webhooks[0].ApprovalTTL)
	}
	if c.Bot.Remind() != 2*time.Hour {
		t.Errorf("approval_remind = %s", c.Bot.Remind())
	}
	if d := (Bot{}).Remind(); d != DefaultApprovalRemind {
		t.Errorf("default approval_remind = %s", d)
	}
}

// Anything else is refused with an error naming the key and what to
// write instead; a bad approval_remind too.
func TestApprovalTTLGarbage(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"word", "[runner]\napproval_ttl = \"never\"\n", `runner.approval_ttl`},
		{"empty", "[runner]\napproval_ttl = \"\"\n", `runner.approval_ttl`},
		{"negative", "[[bot.routes]]\ntransport = \"slack\"\nchannel = \"C1\"\napproval_ttl = \"-5m\"\n", `bot.routes.approval_ttl`},
		{"integer", "[[schedules]]\nname = \"s\"\ncron = \"@daily\"\nprompt = \"p\"\napproval_ttl = 30\n", `schedules.approval_ttl`},
		{"too short", "[[bot.routes]]\ntransport = \"slack\"\nchannel = \"C1\"\napproval_ttl = \"10s\"\n", `bot.routes[0].approval_ttl: must be a duration from "1m" to "24h", or "none"`},
		{"remind word", "[bot]\napproval_remind = \"none\"\n", `bot.approval_remind`},
		{"remind integer", "[bot]\napproval_remind = 4\n", `"bot.approval_remind": must be a duration string`},
		{"remind short", "[bot]\napproval_remind = \"30s\"\n", `bot.approval_remind: must be a duration from "1m" to "168h"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.proj(tc.file)
			got := f.loadErr()
			if !strings.Contains(got, tc.want) {
				t.Errorf("error %q does not contain %q", got, tc.want)
			}
			if tc.name != "too short" && !strings.Contains(got, "remind") && !strings.Contains(got, `"none"`) {
				t.Errorf("error %q does not say \"none\" is possible", got)
			}
		})
	}
}
