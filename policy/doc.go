// Package policy decides whether a tool call may run. It owns the permission
// rules (`Tool`, `Tool(spec)`, `Bash(prefix:*)`, `Bash=literal`,
// `Edit(glob)`, `Read(glob)`), the pure decision function, shell analysis
// with a real parser, the approval postures (ask, auto, yolo), the per-task
// Gate with its grants and its Approver, and path confinement together with
// the optional bubblewrap sandbox for bash. Where bash is not sandboxed,
// ShellStaysInside proves which commands write only inside the workspace.
//
// Policy comes only from the service's configuration: nothing in this
// package reads files inside a workspace (it only resolves symbolic links
// there), so a repository cannot grant itself permissions.
package policy
