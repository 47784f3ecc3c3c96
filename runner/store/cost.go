package store

import "reasonix/agent"

// ModelCost is what one model's calls in a task used and cost. A model
// without configured prices is unpriced: its Cost stays 0 and Priced false,
// so nobody mistakes "unknown" for "free".
type ModelCost struct {
	Calls  int         `json:"calls"`
	Tokens agent.Usage `json:"tokens"`
	Cost   float64     `json:"cost"` // USD; 0 when unpriced
	Priced bool        `json:"priced"`
}
