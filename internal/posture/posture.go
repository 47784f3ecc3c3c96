// Package posture is the vocabulary of postures — how a task resolves the
// calls its permission policy asks about — and its one parse. The
// configuration, the command-line flags, the HTTP API and the store all read
// a posture through Parse (or UnmarshalText, which calls it), so a posture
// is a typed value from the edge inward; the policy package re-exports the
// type as policy.Posture.
package posture

import "fmt"

// Posture is one of Ask, Auto and Yolo. The zero value is not a posture;
// Parse turns "" into Ask.
type Posture string

// Postures, from strictest to loosest. Deny rules hold in all of them.
const (
	// Ask asks a person about every Ask decision; with nobody to ask the
	// call is refused (fail closed).
	Ask Posture = "ask"
	// Auto allows the writer fallback; explicit ask rules and nested shell
	// execution still need a person.
	Auto Posture = "auto"
	// Yolo allows every Ask decision, nested shell execution included.
	Yolo Posture = "yolo"
)

// Parse reads a posture name (exactly, as written in docs and config); the
// empty string means Ask. The error says which names are valid.
func Parse(s string) (Posture, error) {
	switch p := Posture(s); p {
	case "":
		return Ask, nil
	case Ask, Auto, Yolo:
		return p, nil
	}
	return "", fmt.Errorf("posture %q is not one of ask, auto, yolo", s)
}

// Rank orders postures by how much they allow without a person: Ask 0,
// Auto 1, Yolo 2; anything else ranks as Ask.
func (p Posture) Rank() int {
	switch p {
	case Auto:
		return 1
	case Yolo:
		return 2
	}
	return 0
}

// String is the posture's name.
func (p Posture) String() string { return string(p) }

// UnmarshalText parses a posture from TOML, JSON or a flag (flag.TextVar).
func (p *Posture) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// MarshalText writes the posture's name.
func (p Posture) MarshalText() ([]byte, error) { return []byte(p), nil }
