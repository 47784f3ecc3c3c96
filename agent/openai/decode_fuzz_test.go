package openai

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
		"",
		"data: [DONE]\n\n",
		"data: {nope\n\n",
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{}"}}]}}]}`+"\n\ndata: [DONE]\n\n",
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1}]}}]}`+"\n\n",
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"f"}},{"id":"b","function":{"name":"g"}}]},"finish_reason":"tool_calls"}]}`+"\n\n",
		`data: {"error":{"message":"maximum context length exceeded","code":null}}`+"\n\n",
		`data: {"usage":{"prompt_tokens":1,"prompt_tokens_details":null}}`+"\n\ndata: [DONE]\n\n",
	)
}
