package agent

import "context"

type processKey struct{}

// ContextWithProcessReporter returns ctx carrying report, which a tool calls
// (through ReportProcess) right after it started a process group, so the
// runner can record the group in its journal and kill it after a crash.
func ContextWithProcessReporter(ctx context.Context, report func(pid int)) context.Context {
	return context.WithValue(ctx, processKey{}, report)
}

// ReportProcess tells whoever runs the tool in ctx, if anyone listens, that
// the call started the process group led by pid. It returns once the report
// is recorded.
func ReportProcess(ctx context.Context, pid int) {
	if report, ok := ctx.Value(processKey{}).(func(int)); ok {
		report(pid)
	}
}
