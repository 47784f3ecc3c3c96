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
		// Reasoning text and summaries: parts out of order, a delta that is
		// not a string, an index that is not a number, no item at all.
		"data: {\"type\":\"response.reasoning_summary_part.added\",\"summary_index\":7}\n\n"+
			"data: {\"type\":\"response.reasoning_summary_text.delta\",\"delta\":\"\\u0000\\ud800\"}\n\n"+
			"data: {\"type\":\"response.reasoning_summary_part.added\",\"summary_index\":-1}\n\n"+
			"data: {\"type\":\"response.completed\"}\n\n",
		"data: {\"type\":\"response.reasoning_text.delta\",\"delta\":42}\n\n",
		"data: {\"type\":\"response.reasoning_summary_part.added\",\"summary_index\":\"1\"}\n\n",
		"data: {\"type\":\"response.reasoning_text.delta\",\"delta\":\"thinking\"}\n\n",
	)
}
