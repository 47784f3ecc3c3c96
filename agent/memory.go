package agent

import (
	"context"
	"time"
)

// Memory is what the memory tools (remember, forget, memory) and the recall
// before each turn reach: the facts kept between tasks, in scopes the
// implementation chooses for the run (the runner's: the task's workspace
// and its requester). Implementations must be safe for concurrent use and
// refuse, with an error the model can read, a write the run may not make
// (a text holding a secret).
type Memory interface {
	// Remember saves text in scope ("workspace" or "user"). Remembering a
	// text already kept in that scope returns the kept entry.
	Remember(ctx context.Context, scope, text string) (MemoryEntry, error)
	// Forget removes entry id from what is recalled; an id outside the
	// run's scopes is an error.
	Forget(ctx context.Context, id string) (MemoryEntry, error)
	// Search returns at most limit entries of the run's scopes, the most
	// relevant to query first; an empty query lists the newest.
	Search(ctx context.Context, query string, limit int) ([]MemoryEntry, error)
}

// MemoryEntry is one remembered fact.
type MemoryEntry struct {
	ID     string
	Scope  string // "workspace" or "user"
	Text   string
	By     string // the principal whose task (or who) saved it
	TaskID string // the task that saved it; empty when a person did
	At     time.Time
}

// History is what the history tools (list_sessions, read_session, history)
// reach: the past tasks of the run's workspace its requester may see.
// Implementations bound what they return and must be safe for concurrent
// use.
type History interface {
	// Sessions lists at most limit past tasks, newest first, before the
	// task id before ("" is from the newest).
	Sessions(ctx context.Context, before string, limit int) ([]SessionInfo, error)
	// Session reads the transcript of past task id, messages [offset,
	// offset+limit).
	Session(ctx context.Context, id string, offset, limit int) (SessionText, error)
	// Search ranks past tasks against query, best first, at most limit.
	Search(ctx context.Context, query string, limit int) ([]HistoryHit, error)
}

// SessionInfo describes one past task.
type SessionInfo struct {
	ID        string
	State     string
	Requester string
	Prompt    string // cut to a line or two
	Created   time.Time
}

// SessionText is a window of a past task's transcript.
type SessionText struct {
	Info     SessionInfo
	Messages []Message
	Total    int // messages in the whole transcript
}

// HistoryHit is a past task matching a history search, with the passage
// that matched best.
type HistoryHit struct {
	Info    SessionInfo
	Excerpt string
	Score   float64
}

// Skills is what the skill tools (read_skill, run_skill) reach: the skills
// of the run, read before it started (the runner's from the task's base
// commit, never from what the task wrote). Implementations must be safe
// for concurrent use.
type Skills interface {
	// Skill finds an enabled skill; an unknown name is an error the model
	// can read (naming the nearest skills).
	Skill(name string) (SkillText, error)
	// RunSubagent runs the sub-agent skill name on task as its profile
	// and returns the sub-agent's final answer.
	RunSubagent(ctx context.Context, name, task string) (string, error)
}

// SkillText is one skill as the skill tools show it.
type SkillText struct {
	Name        string
	Description string
	// Subagent is true for a runAs: subagent skill.
	Subagent bool
	// Body is the instructions as written.
	Body string
	// Render fills the body's argument placeholders with args; nil
	// leaves the body as written.
	Render func(args []string) string
}
