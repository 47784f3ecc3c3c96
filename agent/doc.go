// Package agent is the core of Reasonix: the message and event vocabulary, the
// Provider and Tool plugin contracts with their registries, the Gate that every
// tool call passes, and the harness loop that drives a model through a
// tool-using conversation.
//
// The package knows only interfaces. Concrete providers (agent/openai) and
// tools (agent/builtin, mcp) register themselves or are added per run; the
// permission policy arrives as a Gate. Nothing here prints or exits: callers
// receive results, typed errors and events.
package agent
