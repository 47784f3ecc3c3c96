package agent

import "context"

// LiveOutput receives a foreground command's output while it runs, beside
// the result the tool returns (which it does not change): an editor shows
// it as it is produced.
type LiveOutput interface {
	// Write gets the output (stdout and stderr, as produced). It must not
	// block, since the command's pipe waits on it; an error is ignored.
	Write(p []byte) (int, error)
	// Done says the command ended with exit status code (128 + the signal
	// when a signal killed it; -1 when it could not start). It may wait a
	// little for the output to be shown, and is called once.
	Done(code int)
}

// LiveOutputFunc opens the live output of a command a tool runs in ctx
// (ToolCallFromContext names the call); kill stops the command, as a
// person stopping it from where it is shown. Nil means nobody watches.
type LiveOutputFunc func(ctx context.Context, command string, kill func()) LiveOutput

type liveOutputKey struct{}

// ContextWithLiveOutput returns ctx carrying open, which the bash tool asks
// for a live output for each foreground command it runs.
func ContextWithLiveOutput(ctx context.Context, open LiveOutputFunc) context.Context {
	return context.WithValue(ctx, liveOutputKey{}, open)
}

// OpenLiveOutput returns the live output of a command run in ctx, or nil.
func OpenLiveOutput(ctx context.Context, command string, kill func()) LiveOutput {
	if open, ok := ctx.Value(liveOutputKey{}).(LiveOutputFunc); ok && open != nil {
		return open(ctx, command, kill)
	}
	return nil
}
