package apitype

// GCRequest is the body of POST /api/v1/gc.
type GCRequest struct {
	// DryRun lists what would be removed, and what is kept and why,
	// removing nothing.
	DryRun bool `json:"dry_run"`
}

// GC actions.
const (
	GCRemove = "remove" // removed (in a dry run: would be)
	GCKeep   = "keep"   // kept: Reason says why
)

// GCItem is one thing garbage collection removed or kept.
type GCItem struct {
	TaskID string `json:"task_id"`
	// What is "scratch", "worktree", "branch" (the local reasonix/<id>
	// branch) or "history" (events, messages, tool journal).
	What   string `json:"what"`
	Action string `json:"action"` // GCRemove or GCKeep
	Reason string `json:"reason"`
	Rows   int64  `json:"rows,omitempty"`  // history: the rows deleted
	Bytes  int64  `json:"bytes,omitempty"` // history: about what their contents took
	// Error says a removal that was due failed (the item is kept); the
	// detail is in the service's log.
	Error string `json:"error,omitempty"`
}

// GCReport answers POST /api/v1/gc: what the node that answered removed
// of its own directories and of the shared store's history.
type GCReport struct {
	DryRun  bool     `json:"dry_run"`
	Node    string   `json:"node"`
	Items   []GCItem `json:"items"`
	Removed int      `json:"removed"` // items removed (or, in a dry run, to remove)
	Kept    int      `json:"kept"`
	Bytes   int64    `json:"bytes"` // of the history removed
}
