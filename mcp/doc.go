// Package mcp connects Reasonix to external tool servers that speak the Model
// Context Protocol and adapts their tools to agent.Tool.
//
// A Manager owns one connection per configured server. Start launches every
// server in the background (initialize → notifications/initialized →
// tools/list, bounded by the server's startup timeout) and returns at once;
// callers wait for readiness with WaitReady for as long as they can afford,
// list states with Status and add the tools of every ready server to a run's
// registry with AddTools. Each remote tool becomes an agent.Tool named
// mcp__<server>__<tool>.
//
// Transports are the official SDK's: stdio (a subprocess in its own process
// group, one JSON message per line, stderr copied to the log), streamable
// HTTP and the legacy HTTP+SSE transport. Static headers are only ever sent to
// the configured origin, and an SSE server that announces a message endpoint
// on another origin is refused.
//
// Connections are shared by every run that uses the Manager. A server whose
// connection dies (a crashed process, a dropped session) fails the calls in
// flight with a clear error and is started again on its next use. A server
// configured as serial never runs two calls at once, whichever run issues
// them.
package mcp
