package policy

import "reasonix/internal/posture"

// Posture is how a task resolves calls the policy says to ask about. It is
// posture.Posture, the one vocabulary every entry point parses.
type Posture = posture.Posture

// Postures, from strictest to loosest. Deny decisions hold in all of them.
const (
	// PostureAsk asks a person about every Ask; with nobody to ask the call
	// is refused (fail closed).
	PostureAsk = posture.Ask
	// PostureAuto allows the writer fallback; explicit ask rules and nested
	// shell execution still need a person.
	PostureAuto = posture.Auto
	// PostureYolo allows every Ask, nested shell execution included.
	PostureYolo = posture.Yolo
)

// ParsePosture reads a posture name; the empty string means PostureAsk.
func ParsePosture(s string) (Posture, error) { return posture.Parse(s) }
