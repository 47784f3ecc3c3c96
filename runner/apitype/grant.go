package apitype

import "time"

// Grant is a standing grant ("Allow always"): a rule in allow form that
// allows matching calls in every task of a workspace, schedule or webhook
// without asking a person. Deny rules still win.
type Grant struct {
	ID         string     `json:"id"`
	Scope      string     `json:"scope"`     // Bash(go test:*), Edit(docs/**)
	GrantFor   string     `json:"grant_for"` // workspace, schedule or webhook
	Name       string     `json:"name"`      // which one
	GrantedBy  string     `json:"granted_by"`
	ApprovalID string     `json:"approval_id,omitempty"` // the decision that made it
	TaskID     string     `json:"task_id,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	RevokedBy  string     `json:"revoked_by,omitempty"`
	Uses       int64      `json:"uses"` // calls it allowed
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

// GrantList answers GET /api/v1/grants.
type GrantList struct {
	Grants []Grant `json:"grants"`
}
