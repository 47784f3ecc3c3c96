package agenttest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"reasonix/agent"
)

// Skills is an in-memory agent.Skills for tool tests. Inline skills
// render "$ARGUMENTS" as the arguments joined by spaces; RunSubagent
// answers "done: TASK" and records the call. It is safe for concurrent
// use; set By before sharing it.
type Skills struct {
	By map[string]agent.SkillText

	mu   sync.Mutex
	Runs []string // "name: task" of each RunSubagent call
}

var _ agent.Skills = (*Skills)(nil)

// Skill implements agent.Skills.
func (s *Skills) Skill(name string) (agent.SkillText, error) {
	sk, ok := s.By[name]
	if !ok {
		names := make([]string, 0, len(s.By))
		for n := range s.By {
			names = append(names, n)
		}
		sort.Strings(names)
		return agent.SkillText{}, fmt.Errorf("no skill %q (known: %s)", name, strings.Join(names, ", "))
	}
	if sk.Render == nil && !sk.Subagent {
		body := sk.Body
		sk.Render = func(args []string) string { return strings.ReplaceAll(body, "$ARGUMENTS", strings.Join(args, " ")) }
	}
	return sk, nil
}

// RunSubagent implements agent.Skills.
func (s *Skills) RunSubagent(_ context.Context, name, task string) (string, error) {
	sk, ok := s.By[name]
	if !ok || !sk.Subagent {
		return "", fmt.Errorf("%s is not a sub-agent skill", name)
	}
	s.mu.Lock()
	s.Runs = append(s.Runs, name+": "+task)
	s.mu.Unlock()
	return "done: " + task, nil
}
