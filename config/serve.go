package config

import (
	"net"
	"strconv"
	"time"
)

// defaultIntakeInflightBytes is intakebudget.DefaultBytes, which this
// package does not import to stay free of net/http; a test keeps the two
// equal.
const defaultIntakeInflightBytes = 32 << 20

// Serve is the [serve] table: the HTTP service of `reasonix serve`.
type Serve struct {
	Addr string `toml:"addr"` // listen address; default "127.0.0.1:8080"
	// APITokenEnv names the variable holding the API bearer token; "" = the
	// caller decides (e.g. generate one).
	APITokenEnv string `toml:"api_token_env"`
	// AllowWorkspacePlugins lets workspaces that opt in start MCP servers
	// declared in their own .mcp.json; default false.
	AllowWorkspacePlugins bool `toml:"allow_workspace_plugins"`
	// MaxStreamsPerToken caps the event streams (SSE) one API token holds
	// open at once; default 64. Each stream holds a connection and a
	// goroutine for as long as the client wants.
	MaxStreamsPerToken int `toml:"max_streams_per_token"`
	// IntakeInflightBytes bounds the bytes that request bodies not yet
	// authenticated (webhooks, Slack's and Telegram's HTTP modes) hold at
	// once; default 32 MiB. A body that does not fit is refused 429.
	IntakeInflightBytes int `toml:"intake_inflight_bytes"`
	// DrainTimeout is how long a stopping node lets running steps finish
	// before it hands the rest to another node; default 20s, 0 = at once.
	// StaleAfter is how long a running task may go without a heartbeat
	// before another node takes it over; default 60s.
	DrainTimeout time.Duration `toml:"drain_timeout"`
	StaleAfter   time.Duration `toml:"stale_after"`
	// PublicURL is where people and platforms reach this service from
	// outside (see publicurl.go); "" when unknown.
	PublicURL string `toml:"public_url"`
}

func (s *Serve) validate(c *Config, p *problems) {
	src := c.origins["serve.addr"]
	_, port, err := net.SplitHostPort(s.Addr)
	if err != nil {
		p.add(src, "serve.addr", "%q is not host:port (e.g. \"127.0.0.1:8080\")", s.Addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.add(src, "serve.addr", "%q has an invalid port", s.Addr)
	}
	checkRange(p, c.origins["serve.max_streams_per_token"], "serve.max_streams_per_token", s.MaxStreamsPerToken, 1, 100000)
	// At least the 1 MiB limit of Slack's, Telegram's and hmac webhooks'
	// bodies, so that none of them is too large for the budget itself.
	checkRange(p, c.origins["serve.intake_inflight_bytes"], "serve.intake_inflight_bytes", s.IntakeInflightBytes, 1<<20, 1<<30)
	checkEnvName(p, c.origins["serve.api_token_env"], "serve.api_token_env", s.APITokenEnv)
	s.validateCluster(c, p)
	checkPublicURL(p, c.origins["serve.public_url"], s.PublicURL)
}
