// Package session assembles an agent session: from the configuration, a
// workspace directory, a posture and the resolved model it builds the
// confinement, the policy gate, the tool environment, the built-in tools,
// the MCP plugins, and for goals the sub-agent host and the goal controller.
//
// It is the one door through which every run is built: `reasonix run` and
// the service's workers (and the chat, webhook and schedule intakes, which
// hand their tasks to the service) all assemble sessions here, so a rule
// about confinement, secrets or sub-agents is fixed once.
//
// Sub-agents get the same gate semantics on every path: their calls are
// decided by the task's policy, posture and grants, but nobody is asked on
// their behalf — a call of a sub-agent that needs a person is refused as
// unattended, and the parent agent, whose calls can wait for an approval,
// may make it itself. While an approved plan is being executed the
// approved-plan window applies to sub-agents as it does to the parent.
package session
