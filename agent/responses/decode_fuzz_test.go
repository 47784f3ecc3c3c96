package responses

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
		"data: {\"type\":\"response.completed\"}\n\n",
		"data: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":3,\"delta\":\"{\"}\n\n",
		"data: {\"type\":\"error\",\"code\":42}\n\n",
	)
}
