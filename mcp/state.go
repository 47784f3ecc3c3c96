package mcp

// State is where a server's connection is in its life.
type State string

// The states a server moves through. A ready server whose connection dies
// goes back to starting on its next use; a failed one is tried again on its
// next use as well.
const (
	StateStarting State = "starting" // launching, initialize or tools/list in progress
	StateReady    State = "ready"    // connected; its tools can be called
	StateFailed   State = "failed"   // the last start or the connection failed; see Status.Err
	StateClosed   State = "closed"   // the Manager was stopped
)

// Status describes one server for listings such as `reasonix mcp list`.
type Status struct {
	Server    string
	Type      string // TypeStdio, TypeHTTP or TypeSSE
	State     State
	Tools     int   // tools listed by the server's last successful start
	Err       error // why the server failed; nil unless State is StateFailed
	Serial    bool  // calls never overlap
	PID       int   // the stdio process while one runs, else 0
	SessionID string
}
