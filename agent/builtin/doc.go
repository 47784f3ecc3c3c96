// Package builtin provides the tools every Reasonix agent can call without a
// plugin: file reading and editing, directory listing, glob and grep search,
// a POSIX shell, and the model-maintained plan (todo_write).
//
// Each tool registers itself with agent.RegisterBuiltin in an init function,
// so a binary gets them by blank-importing this package (only cmd/reasonix
// does). A run builds its own instances from an agent.ToolEnv through
// agent.ToolRegistry.AddBuiltins.
//
// Every path a tool touches goes through env.Paths (an agent.PathGuard):
// ReadPath for readers, WritePath for writers. Without a guard every file tool
// refuses to work, because a tool that silently ran unconfined would defeat
// the permission policy. Tools report bad arguments as errors naming the
// field, so the model can correct the call; they never panic on input.
package builtin
