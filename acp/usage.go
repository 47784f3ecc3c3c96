package acp

import (
	"sync"

	"reasonix/agent"
	"reasonix/runner/session"
)

// turnUsage adds up one prompt's model calls, priced like `reasonix run`'s
// (runner/session's prices), for the session/prompt response.
type turnUsage struct {
	prices *session.Prices

	mu     sync.Mutex
	tokens agent.Usage
	usd    float64
	priced bool
}

func (u *turnUsage) observe(e agent.Event) {
	if e.Type != agent.EventUsage || e.Usage == nil {
		return
	}
	usd, priced := u.prices.Cost(e.Model, *e.Usage)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.tokens = u.tokens.Add(*e.Usage)
	u.usd += usd
	u.priced = u.priced || priced
}

// reset starts a new prompt's count.
func (u *turnUsage) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.tokens, u.usd, u.priced = agent.Usage{}, 0, false
}

// addTo puts the count in a session/prompt result: ACP's usage, and the
// cost under _meta["reasonix.io"] when the model is priced.
func (u *turnUsage) addTo(res map[string]any) map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	usage := map[string]any{
		"inputTokens":  u.tokens.Prompt,
		"outputTokens": u.tokens.Completion,
		"totalTokens":  u.tokens.Prompt + u.tokens.Completion,
	}
	if u.tokens.Cached > 0 {
		usage["cachedReadTokens"] = u.tokens.Cached
	}
	res["usage"] = usage
	if u.priced {
		res["_meta"] = map[string]any{"reasonix.io": map[string]any{"costUSD": u.usd}}
	}
	return res
}
