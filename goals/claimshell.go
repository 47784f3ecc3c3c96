package goals

import (
	"slices"

	"reasonix/agent"
	"reasonix/policy"
)

// ClaimedShell decides how a sub-agent's bash may run, for a ChildFactory.
// A writer child with a write claim gets bash bound to the claim by the OS
// sandbox (policy.Confinement.Claimed); when that is impossible (bash runs
// unconfined, or there is no confinement) bash is left out of the built-ins
// it is given, since nothing else could hold its writes to the claim.
// enabled names the built-ins (nil means all); every other child keeps
// shell and enabled as they are. A factory using it sets
// HostConfig.ShellBound.
func ClaimedShell(c *policy.Confinement, spec ChildSpec, shell agent.ShellWrapper, enabled []string) (agent.ShellWrapper, []string) {
	if !spec.Writer || len(spec.WritePaths) == 0 {
		return shell, enabled
	}
	if c != nil {
		if bound, err := c.Claimed(spec.WritePaths); err == nil {
			return bound, enabled
		}
	}
	names := enabled
	if len(names) == 0 {
		names = agent.Builtins()
	}
	return shell, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "bash" })
}
