package config

import "time"

// How `reasonix serve` nodes hand work to each other (see docs/SPEC.md,
// "Nodes"). Exported for the runner, whose Config defaults to the same
// values (see DefaultTaskTimeout).
const (
	// DefaultDrainTimeout is how long a stopping node lets its running
	// steps finish before it hands the rest to another node; it stays
	// below the 30 s most supervisors (Kubernetes, Docker) wait.
	DefaultDrainTimeout = 20 * time.Second
	// DefaultStaleAfter is how long a running task may go without a
	// heartbeat before another node takes it over.
	DefaultStaleAfter = 60 * time.Second
)

// validateCluster checks [serve] drain_timeout and stale_after.
func (s *Serve) validateCluster(c *Config, p *problems) {
	if s.DrainTimeout < 0 || s.DrainTimeout > time.Hour {
		p.add(c.origins["serve.drain_timeout"], "serve.drain_timeout", "must be between 0s and 1h (got %s)", s.DrainTimeout)
	}
	// Heartbeats go out every stale_after/6; below a few seconds a busy
	// database would make live nodes look dead.
	if s.StaleAfter < 3*time.Second || s.StaleAfter > 24*time.Hour {
		p.add(c.origins["serve.stale_after"], "serve.stale_after", "must be between 3s and 24h (got %s)", s.StaleAfter)
	}
}
