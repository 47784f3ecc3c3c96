// Package acp is Reasonix's agent side of the Agent Client Protocol (ACP
// v1): NDJSON JSON-RPC 2.0 over a process's standard input and output, as
// editors (Zed, JetBrains, Neovim) launch coding agents. `reasonix acp`
// serves it.
//
// Every ACP session is assembled by runner/session, the one door `reasonix
// run` and the service's workers use, so an editor's session has the same
// agent, policy, sandbox and compaction. What is ACP's own lives here: the
// framing guard in front of the JSON-RPC connection (a bad frame is
// answered with a JSON-RPC error, never a crash), the session table, the
// translation of agent events to session/update notifications, permission
// requests to the editor, persisted transcripts for session/load, and the
// _reasonix.io/session/steer extension.
//
// The JSON-RPC connection (request correlation, $/cancel_request,
// notification ordering) and the wire types come from
// github.com/coder/acp-go-sdk; the dispatch is ours, because the SDK's has
// no session/delete and parses mcpServers only in the newest shape.
package acp
