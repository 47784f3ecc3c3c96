package agenttest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"reasonix/agent"
)

// Memory is an in-memory agent.Memory for tool tests: Search matches every
// word of the query as a case-blind substring, newest first. Refuse, when
// set, makes Remember fail for texts holding it (as the runner refuses a
// secret). The zero value is ready; it is safe for concurrent use.
type Memory struct {
	Refuse string

	mu      sync.Mutex
	entries []agent.MemoryEntry
	n       int
}

var _ agent.Memory = (*Memory)(nil)

// Remember implements agent.Memory.
func (m *Memory) Remember(_ context.Context, scope, text string) (agent.MemoryEntry, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return agent.MemoryEntry{}, fmt.Errorf("a memory has text")
	}
	if m.Refuse != "" && strings.Contains(text, m.Refuse) {
		return agent.MemoryEntry{}, fmt.Errorf("the text holds a secret; it was not saved")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.entries {
		if e.Scope == scope && e.Text == text {
			return e, nil
		}
	}
	m.n++
	e := agent.MemoryEntry{ID: fmt.Sprintf("mem_%d", m.n), Scope: scope, Text: text, By: "test", At: time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)}
	m.entries = append(m.entries, e)
	return e, nil
}

// Forget implements agent.Memory.
func (m *Memory) Forget(_ context.Context, id string) (agent.MemoryEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, e := range m.entries {
		if e.ID == id {
			m.entries = slices.Delete(m.entries, i, i+1)
			return e, nil
		}
	}
	return agent.MemoryEntry{}, fmt.Errorf("no memory %s", id)
}

// Search implements agent.Memory.
func (m *Memory) Search(_ context.Context, query string, limit int) ([]agent.MemoryEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []agent.MemoryEntry
	for i := len(m.entries) - 1; i >= 0 && len(out) < limit; i-- {
		if matchesAll(m.entries[i].Text, query) {
			out = append(out, m.entries[i])
		}
	}
	return out, nil
}

func matchesAll(text, query string) bool {
	text = strings.ToLower(text)
	for _, w := range strings.Fields(strings.ToLower(query)) {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// History is an in-memory agent.History over fixed sessions (newest last
// in Sessions order as given: index 0 is the oldest). Search matches every
// word of the query in the prompt or a message, newest first.
type History struct {
	Tasks []HistoryTask
}

// HistoryTask is one past task of a History.
type HistoryTask struct {
	Info     agent.SessionInfo
	Messages []agent.Message
}

var _ agent.History = (*History)(nil)

// Sessions implements agent.History.
func (h *History) Sessions(_ context.Context, before string, limit int) ([]agent.SessionInfo, error) {
	var out []agent.SessionInfo
	started := before == ""
	for i := len(h.Tasks) - 1; i >= 0 && len(out) < limit; i-- {
		if started {
			out = append(out, h.Tasks[i].Info)
		}
		started = started || h.Tasks[i].Info.ID == before
	}
	return out, nil
}

// Session implements agent.History.
func (h *History) Session(_ context.Context, id string, offset, limit int) (agent.SessionText, error) {
	for _, t := range h.Tasks {
		if t.Info.ID != id {
			continue
		}
		lo, hi := min(offset, len(t.Messages)), min(offset+limit, len(t.Messages))
		return agent.SessionText{Info: t.Info, Messages: t.Messages[lo:hi], Total: len(t.Messages)}, nil
	}
	return agent.SessionText{}, fmt.Errorf("no past task %s in this workspace", id)
}

// Search implements agent.History.
func (h *History) Search(_ context.Context, query string, limit int) ([]agent.HistoryHit, error) {
	var out []agent.HistoryHit
	for i := len(h.Tasks) - 1; i >= 0 && len(out) < limit; i-- {
		t := h.Tasks[i]
		texts := []string{t.Info.Prompt}
		for _, m := range t.Messages {
			texts = append(texts, m.Content)
		}
		for _, s := range texts {
			if matchesAll(s, query) {
				out = append(out, agent.HistoryHit{Info: t.Info, Excerpt: s, Score: 1})
				break
			}
		}
	}
	return out, nil
}
