package config

import (
	"reflect"
	"testing"

	"github.com/BurntSushi/toml"
)

// Whatever the user config looks like, an edit either refuses or changes
// exactly [agent] compact_ratio and nothing else.
func FuzzEditCompactRatio(f *testing.F) {
	for _, s := range []string{
		"",
		"[agent]\nmax_steps = 5\n",
		"[agent]\ncompact_ratio = 0.5\n[tools]\nenabled = []\n",
		"x = \"\"\"\n[agent]\n\"\"\"\n",
		"[[agent]]\n",
		"[agent.sub]\nk = 1\n",
		"agent = { max_steps = 1 }\n",
		"[ agent ] # c\n compact_ratio=0.3\n",
		"a.b = 1\n[providers]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var before map[string]any
		if _, err := toml.Decode(src, &before); err != nil {
			return
		}
		next, err := editCompactRatio(src, 0.8)
		if err != nil {
			return
		}
		var after map[string]any
		if _, err := toml.Decode(next, &after); err != nil {
			t.Fatalf("edited file does not parse: %v\n%s", err, next)
		}
		agent, _ := after["agent"].(map[string]any)
		if agent == nil || agent["compact_ratio"] != 0.8 {
			t.Fatalf("compact_ratio not set:\n%s", next)
		}
		delete(agent, "compact_ratio")
		if len(agent) == 0 {
			if b, _ := before["agent"].(map[string]any); b == nil || len(b) == 0 {
				delete(after, "agent")
				if b != nil {
					delete(before, "agent")
				}
			}
		}
		if ba, ok := before["agent"].(map[string]any); ok {
			delete(ba, "compact_ratio")
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("the edit changed more than compact_ratio:\n%q\n%q\n%v\n%v", src, next, before, after)
		}
	})
}
