package apitype

import "time"

// Memory is a fact an agent remembered for later tasks: of a workspace
// (every task of it recalls it) or of a user principal (that principal's
// tasks).
type Memory struct {
	ID          string     `json:"id"`
	Scope       string     `json:"scope"` // workspace:<name> or user:<principal>
	Text        string     `json:"text"`
	By          string     `json:"by"`                // the principal whose task (or who) saved it
	TaskID      string     `json:"task_id,omitempty"` // the task that saved it
	CreatedAt   time.Time  `json:"created_at"`
	ForgottenAt *time.Time `json:"forgotten_at,omitempty"`
	ForgottenBy string     `json:"forgotten_by,omitempty"`
}

// MemoryList answers GET /api/v1/memories.
type MemoryList struct {
	Memories []Memory `json:"memories"`
}
