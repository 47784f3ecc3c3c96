package policy

import "fmt"

// Posture is how a task resolves calls the policy says to ask about.
type Posture string

// Postures, from strictest to loosest. Deny decisions hold in all of them.
const (
	// PostureAsk asks a person about every Ask; with nobody to ask the call
	// is refused (fail closed).
	PostureAsk Posture = "ask"
	// PostureAuto allows the writer fallback; explicit ask rules and nested
	// shell execution still need a person.
	PostureAuto Posture = "auto"
	// PostureYolo allows every Ask, nested shell execution included.
	PostureYolo Posture = "yolo"
)

// ParsePosture reads a posture name; the empty string means PostureAsk.
func ParsePosture(s string) (Posture, error) {
	switch Posture(s) {
	case "", PostureAsk:
		return PostureAsk, nil
	case PostureAuto, PostureYolo:
		return Posture(s), nil
	}
	return "", fmt.Errorf("policy: posture %q: want \"ask\", \"auto\" or \"yolo\"", s)
}
