package dashboard

import "sync"

// MaxStreamsPerPrincipal caps the live streams one principal holds open at
// once, over all its sessions: each holds a connection, a goroutine and a
// subscription for as long as a tab stays open, and without a cap one
// person's tabs (or a script with their cookie) could exhaust the service.
const MaxStreamsPerPrincipal = 32

// streamCount counts open live streams per principal.
type streamCount struct {
	mu   sync.Mutex
	open map[string]int
}

// acquire takes a slot for principal; false when it holds the maximum.
// Call release exactly once after a successful acquire.
func (c *streamCount) acquire(principal string) (release func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil {
		c.open = map[string]int{}
	}
	if c.open[principal] >= MaxStreamsPerPrincipal {
		return nil, false
	}
	c.open[principal]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.open[principal]--; c.open[principal] <= 0 {
				delete(c.open, principal)
			}
		})
	}, true
}
