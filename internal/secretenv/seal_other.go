//go:build !linux

package secretenv

// reexec is not possible here: the values stay in the environment, and
// Lookup serves them from memory all the same.
func reexec(h handover, _ []string) error {
	for name, v := range h.Values {
		remember(name, v, "")
	}
	return nil
}

// Receive does nothing where Seal never re-execs.
func Receive() error { return nil }

func harden() error { return nil }

// scrubInPlace is not possible either.
var scrubInPlace func([]string) error
