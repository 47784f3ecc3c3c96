package main

import (
	"time"

	"reasonix/runner/store"
)

// task and approval are the end-to-end tests' own reading of the API's
// JSON. They are deliberately not runner/apitype's records, which the CLI
// and the server share: a change that moved a field on both sides at once
// would still fail here.
type task struct {
	ID        string    `json:"id"`
	Source    string    `json:"source"`
	Requester string    `json:"requester"`
	Prompt    string    `json:"prompt"`
	Goal      bool      `json:"goal"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
	Result    *struct {
		Summary     string `json:"summary"`
		FinalAnswer string `json:"final_answer"`
		DiffStat    string `json:"diff_stat"`
		Branch      string `json:"branch"`
		Tokens      struct {
			Prompt     int `json:"prompt"`
			Completion int `json:"completion"`
		} `json:"tokens"`
		Cost           float64                    `json:"cost"`
		UnpricedTokens int                        `json:"unpriced_tokens"`
		Models         map[string]store.ModelCost `json:"models"`
		DurationMS     int64                      `json:"duration_ms"`
		Error          string                     `json:"error"`
		Reason         string                     `json:"reason"`
	} `json:"result"`
}

type approval struct {
	ID        string    `json:"id"`
	TaskID    string    `json:"task_id"`
	Tool      string    `json:"tool"`
	Subject   string    `json:"subject"`
	Preview   string    `json:"preview"`
	Requester string    `json:"requester"`
	Scopes    []string  `json:"scopes"`
	State     string    `json:"state"`
	Decision  string    `json:"decision"`
	DecidedBy string    `json:"decided_by"`
	ExpiresAt time.Time `json:"expires_at"`
}
