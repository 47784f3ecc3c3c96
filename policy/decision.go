package policy

import "fmt"

// Decision is what the static policy says about a call.
type Decision int

// Decisions, in increasing strictness.
const (
	Allow Decision = iota // run it
	Ask                   // a person (or the posture) must decide
	Deny                  // never run it
)

// String returns "allow", "ask" or "deny".
func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// parseMode reads `[permissions] mode`: the writer fallback.
func parseMode(s string) (Decision, error) {
	switch s {
	case "", "ask":
		return Ask, nil
	case "allow":
		return Allow, nil
	case "deny":
		return Deny, nil
	}
	return 0, fmt.Errorf("policy: mode %q: want \"ask\", \"allow\" or \"deny\"", s)
}
