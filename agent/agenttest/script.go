// Package agenttest provides fakes for tests of code built on package agent:
// a scripted OpenAI-compatible HTTP server that speaks the real SSE wire
// format, and scripted in-memory providers. Import it only from _test.go
// files (and from benchmarks).
package agenttest

import "reasonix/agent"

// Turn is one scripted model response: text, then tool calls, then usage.
type Turn struct {
	Text         string
	ToolCalls    []agent.ToolCall
	Usage        agent.Usage
	FinishReason string // defaults to "tool_calls" when ToolCalls is set, else "stop"
}
