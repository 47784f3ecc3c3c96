package acp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
	"reasonix/agent/agenttest"
	_ "reasonix/agent/openai"
	"reasonix/config"
)

// TestEffortOptionReachesTheWire: the effort config option starts at the
// provider's setting, and a change rebuilds the controller so the next
// request carries the new effort on the real Chat Completions wire, with
// the conversation kept. A value the config does not accept is -32602.
func TestEffortOptionReachesTheWire(t *testing.T) {
	srv := agenttest.NewServerFor(t, "openai",
		agenttest.Turn{Text: "first", Usage: agent.Usage{Prompt: 10, Completion: 2}},
		agenttest.Turn{Text: "second", Usage: agent.Usage{Prompt: 12, Completion: 2}},
		agenttest.Turn{Text: "third", Usage: agent.Usage{Prompt: 14, Completion: 2}})
	t.Setenv("RX_ACP_EFFORT_KEY", "k")
	dir := t.TempDir()
	f := filepath.Join(dir, "reasonix.toml")
	toml := fmt.Sprintf("[[providers]]\nname = \"p\"\nkind = \"openai\"\nbase_url = %q\nmodel = \"m\"\napi_key_env = \"RX_ACP_EFFORT_KEY\"\neffort = \"low\"\n", srv.URL)
	if err := os.WriteFile(f, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := config.Load(config.LoadOptions{File: f, Home: t.TempDir(), ProjectDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	c := newClientWith(t, Config{Settings: set, Dir: filepath.Join(dir, "sessions")})
	c.initialize()
	id := c.newSession(t.TempDir())
	if got := c.prompt(id, "one"); got != "end_turn" {
		t.Fatal(got)
	}
	var res struct {
		ConfigOptions []struct {
			ID           string `json:"id"`
			CurrentValue string `json:"currentValue"`
			Options      []struct {
				Value string `json:"value"`
			} `json:"options"`
		} `json:"configOptions"`
	}
	c.call("session/set_config_option", map[string]string{"sessionId": id, "configId": "effort", "value": "high"}, &res)
	var offered []string
	current := ""
	for _, o := range res.ConfigOptions {
		if o.ID == "effort" {
			current = o.CurrentValue
			for _, v := range o.Options {
				offered = append(offered, v.Value)
			}
		}
	}
	if current != "high" || strings.Join(offered, ",") != "default,"+strings.Join(config.Efforts, ",") {
		t.Errorf("effort option after set: current %q, offered %v", current, offered)
	}
	if got := c.prompt(id, "two"); got != "end_turn" {
		t.Fatal(got)
	}
	c.call("session/set_config_option", map[string]string{"sessionId": id, "configId": "effort", "value": "default"}, nil)
	if got := c.prompt(id, "three"); got != "end_turn" {
		t.Fatal(got)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, want := range []string{"low", "high", "low"} {
		if reqs[i].Effort != want {
			t.Errorf("request %d effort %q, want %q", i, reqs[i].Effort, want)
		}
	}
	var said []string
	for _, m := range reqs[1].Messages {
		said = append(said, m.Content)
	}
	if !strings.Contains(strings.Join(said, "|"), "one") || !strings.Contains(strings.Join(said, "|"), "first") {
		t.Errorf("the rebuild lost the conversation: %q", said)
	}
	if code := c.errCode("session/set_config_option", map[string]string{"sessionId": id, "configId": "effort", "value": "extreme"}); code != -32602 {
		t.Errorf("an unknown effort: %d, want -32602", code)
	}
}

// TestWorkModeSetsTheDefaultEffort: with the effort option at its
// default, economy asks for low effort and delivery for high, and a
// work-mode change rebuilds the controller keeping the conversation;
// balanced and an explicit effort keep theirs.
func TestWorkModeSetsTheDefaultEffort(t *testing.T) {
	c := newClient(t, agenttest.Turn{Text: "a"}, agenttest.Turn{Text: "b"}, agenttest.Turn{Text: "c"}, agenttest.Turn{Text: "d"})
	c.initialize()
	id := c.newSession(t.TempDir())
	set := func(option, value string) {
		c.call("session/set_config_option", map[string]string{"sessionId": id, "configId": option, "value": value}, nil)
	}
	var got []string
	for _, step := range []func(){
		func() {}, // balanced: the provider's own
		func() { set("work_mode", "economy") },
		func() { set("effort", "medium") }, // an explicit effort wins
		func() { set("effort", "default"); set("work_mode", "delivery") },
	} {
		step()
		if stop := c.prompt(id, "go"); stop != "end_turn" {
			t.Fatal(stop)
		}
		reqs := c.prov.Requests()
		got = append(got, reqs[len(reqs)-1].Effort)
	}
	if strings.Join(got, ",") != ",low,medium,high" {
		t.Errorf("efforts %q, want balanced none, economy low, explicit medium, delivery high", got)
	}
	reqs := c.prov.Requests()
	if n := len(reqs[len(reqs)-1].Messages); n != 8 { // system + 3 exchanges + the prompt
		t.Errorf("the last request has %d messages: the rebuilds lost the conversation", n)
	}
}
