package anthropic

import (
	"testing"

	"reasonix/agent/agenttest"
	"reasonix/agent/httpstream"
)

// FuzzDecode feeds arbitrary bodies to the stream decoder; see
// agenttest.FuzzDecode for what must hold whatever arrives.
func FuzzDecode(f *testing.F) {
	p := &Provider{client: &httpstream.Client{Key: testKey, MaxOutputBytes: httpstream.DefaultMaxOutputBytes}}
	agenttest.FuzzDecode(f, p.decode,
		"data: {\"type\":\"message_stop\"}\n\n",
		"data: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n",
		"data: {\"type\":\"error\"}\n\n",
	)
}
