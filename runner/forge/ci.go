package forge

// CIState is the state of one check or of all checks on a commit.
type CIState string

// CI states. A single check is pending, success or failure; CINone only
// describes a commit with no checks at all.
const (
	CIPending CIState = "pending"
	CISuccess CIState = "success"
	CIFailure CIState = "failure"
	CINone    CIState = "none"
)

// CI is the combined state of the checks on one commit.
type CI struct {
	// State is CINone without checks, CIPending while any check runs,
	// else CIFailure if any check failed, else CISuccess. A failure does
	// not end the wait early, so that a fix sees every failing check.
	State  CIState
	Checks []Check
}

// Passing counts the checks that succeeded.
func (c CI) Passing() int {
	n := 0
	for _, ch := range c.Checks {
		if ch.State == CISuccess {
			n++
		}
	}
	return n
}

// Failing returns the checks that failed.
func (c CI) Failing() []Check {
	var out []Check
	for _, ch := range c.Checks {
		if ch.State == CIFailure {
			out = append(out, ch)
		}
	}
	return out
}

// Check is one CI check: a GitHub check run or commit status, a GitLab job.
type Check struct {
	// ID identifies the check to Logs; it is opaque to callers.
	ID      string
	Name    string
	State   CIState
	Summary string // the forge's one-line account, may be empty
	URL     string // where a person reads the details
}

// combine derives the commit's state from its checks (see CI.State).
func combine(checks []Check) CI {
	ci := CI{State: CINone, Checks: checks}
	for _, ch := range checks {
		switch {
		case ch.State == CIPending:
			ci.State = CIPending
		case ch.State == CIFailure && ci.State != CIPending:
			ci.State = CIFailure
		case ci.State == CINone:
			ci.State = CISuccess
		}
	}
	return ci
}
