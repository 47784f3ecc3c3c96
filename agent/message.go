package agent

import "encoding/json"

// Role is the author of a Message.
type Role string

// The roles of the OpenAI-compatible chat format.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	// RoleCheckpoint marks a compaction in the canonical conversation (see
	// Checkpoint). It is never sent to a model as it is: the request
	// carries the checkpoint's task and digest instead of what it folded.
	RoleCheckpoint Role = "checkpoint"
)

// Message is one entry of a conversation. An assistant message may carry tool
// calls; a tool message answers exactly one of them through ToolCallID.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
	// ProviderState is opaque data a provider attached to an assistant
	// message and needs back on later requests (e.g. the Responses API's
	// encrypted reasoning items). Only the provider that wrote it reads it;
	// others ignore it. Empty for older transcripts, which stay valid.
	ProviderState json.RawMessage `json:"provider_state,omitempty"`
	// RawContent is a tool result's full text when Content had to be
	// bounded (see MaxToolResult). It is kept with the transcript and never
	// sent to a model.
	RawContent string `json:"raw_content,omitempty"`
	// Checkpoint is set on a RoleCheckpoint message; Content is the digest.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// Images are pictures a tool result shows the model (AttachImage),
	// after Content. They go on the one request right after the result
	// and are then dropped (see Agent.dropImages); they are never encoded
	// in JSON, so no transcript, event or store row carries their bytes.
	// A wire that cannot put an image in a tool result sends it in a user
	// message right after the batch's results.
	Images []Image `json:"-"`
}

// ToolCall is one complete call requested by the model. Arguments is the raw
// JSON object the model produced; it may be malformed, and tools must say so.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSchema describes a tool to the model.
type ToolSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model turn. Model may be empty, in which case the provider
// uses the model it was configured with. Temperature is sent only when set.
// Effort is the reasoning effort ("" = the model's default; see Effort).
type Request struct {
	Model       string
	Messages    []Message
	Tools       []ToolSchema
	Temperature *float64
	MaxTokens   int
	Effort      string
}

// The reasoning-effort levels, least to most. A provider maps each to its
// wire (Chat Completions reasoning_effort, Responses reasoning.effort,
// Anthropic's thinking budget); "" sends nothing, leaving the model's
// default.
const (
	EffortMinimal = "minimal"
	EffortLow     = "low"
	EffortMedium  = "medium"
	EffortHigh    = "high"
	EffortMax     = "max"
)

// Usage counts the tokens of one or more model requests.
type Usage struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	Cached     int `json:"cached"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{Prompt: u.Prompt + v.Prompt, Completion: u.Completion + v.Completion, Cached: u.Cached + v.Cached}
}

// ChunkType says which field of a Chunk is set.
type ChunkType int

// The chunk kinds a provider stream emits. A stream ends with exactly one
// ChunkDone or ChunkError, after which the channel is closed.
const (
	ChunkText ChunkType = iota
	ChunkToolCall
	ChunkUsage
	ChunkDone
	ChunkError
	// ChunkThinking is a piece of the model's reasoning, where the wire
	// shows it (Anthropic thinking blocks, reasoning_content): Text. It is
	// not part of the answer; a provider may send it before the text.
	ChunkThinking
)

// Chunk is one piece of a streamed model response. Providers accumulate tool
// call deltas themselves and emit only complete ToolCalls.
type Chunk struct {
	Type         ChunkType
	Text         string    // ChunkText, ChunkThinking
	ToolCall     *ToolCall // ChunkToolCall
	Usage        Usage     // ChunkUsage
	FinishReason string    // ChunkDone: "stop", "tool_calls", "length", ...
	Err          error     // ChunkError
	// ProviderState (ChunkDone, optional) becomes the assistant message's
	// ProviderState: opaque data the provider wants back on the next request.
	ProviderState json.RawMessage
}
