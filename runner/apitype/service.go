package apitype

import "time"

// Schedule is a [[schedules]] entry and its state. Times are nil when they
// have no value (no next run while paused, no last run yet).
type Schedule struct {
	Name          string     `json:"name"`
	Cron          string     `json:"cron"`
	Timezone      string     `json:"timezone"`
	Enabled       bool       `json:"enabled"`
	Paused        bool       `json:"paused"`
	PausedReason  string     `json:"paused_reason,omitempty"`
	NextRun       *time.Time `json:"next_run,omitempty"`
	LastRun       *time.Time `json:"last_run,omitempty"`
	LastTaskID    string     `json:"last_task_id,omitempty"`
	LastOutcome   string     `json:"last_outcome,omitempty"`
	Failures      int        `json:"failures"`
	MaxFailures   int        `json:"max_failures"`
	Skipped       int64      `json:"skipped"`
	LastSkippedAt *time.Time `json:"last_skipped_at,omitempty"`
	Missed        int64      `json:"missed"`
	Overlap       string     `json:"overlap"`
	CatchUp       string     `json:"catch_up"`
	Posture       Posture    `json:"posture"`
	LastSuccess   *time.Time `json:"last_success,omitempty"`
	// Health is ok, late, failing, paused or disabled; HealthReason says
	// why when it is not ok.
	Health       string `json:"health"`
	HealthReason string `json:"health_reason,omitempty"`
}

// ScheduleList answers GET /api/v1/schedules, in configuration order.
type ScheduleList struct {
	Schedules []Schedule `json:"schedules"`
}

// ScheduleRun answers POST /api/v1/schedules/{name}/run: the task started.
// (The fields keep the order the API has always written them in.)
type ScheduleRun struct {
	Task   Task   `json:"task"`
	TaskID string `json:"task_id"`
}

// NodeState is where a service process is in its life.
type NodeState string

// The node states.
const (
	NodeRunning  NodeState = "running"  // claims and runs tasks
	NodeDraining NodeState = "draining" // stopping: claims nothing new
	NodeStopped  NodeState = "stopped"  // shut down cleanly
)

// Node is one service process sharing the store.
type Node struct {
	ID      string    `json:"id"`
	Version string    `json:"version"`
	Addr    string    `json:"addr,omitempty"`
	State   NodeState `json:"state"`
	// Leader marks the node elected to run maintenance.
	Leader bool `json:"leader"`
	// Stale: a node not stopped that has sent no heartbeat for a while.
	Stale    bool `json:"stale"`
	MaxTasks int  `json:"max_tasks"`
	// Running lists the ids of its tasks in state running.
	Running     []string  `json:"running"`
	StartedAt   time.Time `json:"started_at"`
	HeartbeatAt time.Time `json:"heartbeat_at"`
}

// NodeList answers GET /api/v1/nodes, newest start first.
type NodeList struct {
	Nodes []Node `json:"nodes"`
}

// DeliveryOutcome is what became of one webhook delivery.
type DeliveryOutcome string

// The delivery outcomes.
const (
	DeliveryAccepted  DeliveryOutcome = "accepted"  // a task was created
	DeliveryDuplicate DeliveryOutcome = "duplicate" // an earlier delivery's task was returned
	DeliveryIgnored   DeliveryOutcome = "ignored"   // ping, or outside the events or filter
	DeliveryRejected  DeliveryOutcome = "rejected"  // bad signature, too large, unusable payload
)

// Webhook is one configured webhook with its recent deliveries. It holds
// no secret and no payload.
type Webhook struct {
	Name      string     `json:"name"`
	Kind      string     `json:"kind"`
	Path      string     `json:"path"`
	Events    []string   `json:"events"`
	Filter    string     `json:"filter,omitempty"`
	Workspace string     `json:"workspace,omitempty"`
	Goal      bool       `json:"goal"`
	BudgetUSD float64    `json:"budget_usd,omitempty"`
	Posture   Posture    `json:"posture"`
	Recent    []Delivery `json:"recent"`
}

// Delivery is one webhook delivery as the service recorded it.
type Delivery struct {
	ID         string          `json:"id"`
	Webhook    string          `json:"webhook"`
	DeliveryID string          `json:"delivery_id,omitempty"` // the sender's id (X-GitHub-Delivery, webhook-id)
	Event      string          `json:"event,omitempty"`       // e.g. "check_run.completed"
	Outcome    DeliveryOutcome `json:"outcome"`
	Status     int             `json:"status"` // the HTTP status answered
	Reason     string          `json:"reason,omitempty"`
	TaskID     string          `json:"task_id,omitempty"` // the task started or found
	CreatedAt  time.Time       `json:"created_at"`
}

// WebhookList answers GET /api/v1/webhooks.
type WebhookList struct {
	Webhooks []Webhook `json:"webhooks"`
}

// Status answers GET /healthz ("ok") and GET /readyz ("ready").
type Status struct {
	Status string `json:"status"`
}

// Workspace is a configured [[workspaces]] entry as clients see it: what
// an editor needs to map a checkout to it, and nothing secret.
type Workspace struct {
	Name string `json:"name"`
	// Repo is the repository's URL without credentials, or its path on
	// the server.
	Repo string `json:"repo"`
	Base string `json:"base"`
	// Publish is the forge the workspace's results go to ("github",
	// "gitlab"), empty when they stay on the server.
	Publish string `json:"publish,omitempty"`
}

// WorkspaceList answers GET /api/v1/workspaces, in configuration order.
type WorkspaceList struct {
	Workspaces []Workspace `json:"workspaces"`
}
