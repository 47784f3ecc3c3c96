package procgroup

// Identity names a process group so that a later process (the service
// after a crash) can kill it without hitting an unrelated group that reused
// its number: besides the group id (the leader's pid) it holds the boot it
// ran in and the leader's start time, where the system tells them.
type Identity struct {
	Group int    `json:"group"`
	Boot  string `json:"boot,omitempty"`  // Linux boot id
	Start uint64 `json:"start,omitempty"` // the leader's start time in clock ticks since boot
}

// Identify describes the group led by pid, a process this process just
// started with Detach.
func Identify(pid int) Identity { return identify(pid) }

// KillIdentified kills the group id names if it still exists and is the
// same group: the same boot, and its leader either gone (its orphans keep
// the number taken, so it cannot have been reused) or started at the
// recorded time. killed reports whether a signal was sent. Where the system
// cannot tell a reused number from the original, nothing is killed.
func KillIdentified(id Identity) (killed bool, err error) { return killIdentified(id) }
