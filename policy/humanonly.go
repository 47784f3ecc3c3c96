package policy

import (
	"encoding/json"
	"strings"

	"reasonix/agent"
)

// humanOnlyCall reports whether call is one of entries, each a tool name
// ("forget": every call) or a tool and one string argument's value
// ("remember(scope=user)": only the calls whose scope is "user").
func humanOnlyCall(entries []string, call agent.Call) bool {
	for _, e := range entries {
		tool, cond, ok := strings.Cut(e, "(")
		if tool != call.Tool {
			continue
		}
		if !ok {
			return true
		}
		key, want, _ := strings.Cut(strings.TrimSuffix(cond, ")"), "=")
		var args map[string]json.RawMessage
		if json.Unmarshal(call.Args, &args) != nil {
			return true // unreadable arguments: fail closed
		}
		var got string
		if raw, present := args[key]; present && json.Unmarshal(raw, &got) != nil {
			return true
		}
		if got == want {
			return true
		}
	}
	return false
}
