package apitype

import "time"

// ApprovalState is where an approval request is.
type ApprovalState string

// The approval states.
const (
	ApprovalPending ApprovalState = "pending"
	ApprovalAllowed ApprovalState = "allowed"
	ApprovalDenied  ApprovalState = "denied"
	ApprovalExpired ApprovalState = "expired"
)

// Decision is what a person decided about a call.
type Decision string

// The decisions.
const (
	AllowOnce Decision = "allow_once" // this call only
	AllowTask Decision = "allow_task" // calls like it for the rest of the task (a Scope)
	Deny      Decision = "deny"

	// AllowAlways: calls like it in every later task of the workspace,
	// schedule or webhook (a standing grant; the grant or admin role).
	AllowAlways Decision = "allow_always"

	// StopPublish answers a budget card (an approval of tool "budget"):
	// stop the task and publish what exists. A budget card's other
	// choices are AllowOnce (+ the same budget) and Deny (stop).
	StopPublish Decision = "stop_publish"
)

// Approval is a call waiting for (or given) a person's decision.
type Approval struct {
	ID        string        `json:"id"`
	TaskID    string        `json:"task_id"`
	Tool      string        `json:"tool"`
	Subject   string        `json:"subject"`
	CallHash  string        `json:"call_hash"`
	Preview   string        `json:"preview"`
	Requester string        `json:"requester"`
	Approvers []string      `json:"approvers"`
	Scopes    []string      `json:"scopes"`
	State     ApprovalState `json:"state"`
	Decision  Decision      `json:"decision,omitempty"`
	DecidedBy string        `json:"decided_by,omitempty"`
	Scope     string        `json:"scope,omitempty"`
	Note      string        `json:"note,omitempty"`
	CreatedAt time.Time     `json:"created_at"`
	// ExpiresAt is the deadline; absent, with NoDeadline, for a request
	// that waits until it is decided (approval_ttl = "none").
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	NoDeadline bool       `json:"no_deadline,omitempty"`
	DecidedAt  *time.Time `json:"decided_at,omitempty"`
	// Instructors sent the task messages before the call: they may not
	// decide it.
	Instructors []string `json:"instructors"`

	// AlwaysScope is the rule an allow_always without a scope grants;
	// empty when Allow always is not offered.
	AlwaysScope string `json:"always_scope,omitempty"`
}

// ApprovalList answers GET /api/v1/approvals.
type ApprovalList struct {
	Approvals []Approval `json:"approvals"`
}

// DecideRequest is the body of POST /api/v1/approvals/{id}. The approver
// is the bearer token's principal; the body cannot name one.
type DecideRequest struct {
	Decision Decision `json:"decision"`
	Note     string   `json:"note,omitempty"`
	// Scope is the task-wide grant of an AllowTask, one of the approval's
	// Scopes; empty means the first. With AllowAlways it is the standing
	// grant's rule, one of the Scopes; empty means AlwaysScope.
	Scope string `json:"scope,omitempty"`
	// GrantFor, with AllowAlways: "workspace", "schedule" or "webhook" —
	// the task's own; empty means its schedule or webhook, else its
	// workspace.
	GrantFor string `json:"grant_for,omitempty"`
	// ExpiresAt, with AllowAlways, ends the standing grant; absent means
	// it stands until revoked.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// CallHash, when set, must match the approval's: a decision made on
	// what a person saw cannot apply to a different call.
	CallHash string `json:"call_hash,omitempty"`
}
