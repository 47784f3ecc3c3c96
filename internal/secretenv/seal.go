package secretenv

import (
	"bytes"
	"os"
	"slices"
	"strings"
)

// fdEnv carries the number of the descriptor the secrets are handed over
// on into the re-exec'd image: a number, never a secret.
const fdEnv = "REASONIX_SECRETS_FD"

// handover is what crosses the re-exec.
type handover struct {
	Values map[string]string `json:"values"`
	Files  []string          `json:"files"`
}

// Seal takes the secrets out of the environment the kernel shows. An
// error means a secret file one of names relies on could not be read, or
// the re-exec failed. names
// are the variables the configuration reads secrets from; variables whose
// name looks like a secret's (Secretlike) are added. Every one is read now
// (from the variable, its _FILE or the systemd credential) and kept in
// memory for Lookup. When the process environment holds any of them or
// their _FILE variables, Seal takes them out of the environment the
// processes it starts inherit, and overwrites them with zero bytes in the
// block the kernel shows as /proc/<pid>/environ (scrubInPlace). Where that
// cannot be done, it re-execs the running binary with the same arguments
// and an environment without them, and does not return unless that
// failed; the new image must call Receive first thing. Either way the
// process ends not dumpable.
//
// On systems without the means (not Linux), it returns nil after reading
// the values: the environment keeps them there.
//
// Call it once, early, before the process starts goroutines of its own,
// opens listeners or takes locks: after a re-exec, whatever was done
// before is done twice.
func Seal(names []string) error {
	p := newPlan(names, os.Environ())
	var firstErr error
	for _, name := range p.secrets {
		// A _FILE the configuration relies on must be readable; one of a
		// variable that only looks like a secret's is not Reasonix's
		// business and stays unread.
		if _, _, err := lookup(name); err != nil && firstErr == nil && slices.Contains(names, name) {
			firstErr = err
		}
	}
	if firstErr != nil {
		return firstErr
	}
	state.mu.Lock()
	received := state.received
	h := handover{Values: map[string]string{}, Files: slices.Clone(state.files)}
	for _, name := range p.secrets {
		if v, ok := state.values[name]; ok {
			h.Values[name] = v
		}
	}
	state.mu.Unlock()
	for _, name := range p.secrets {
		if _, ok := h.Values[name]; !ok {
			if v := os.Getenv(name); v != "" {
				h.Values[name] = v
			}
		}
	}
	if received || len(p.scrub) == 0 {
		// Keep what the environment holds as if handed over, so Values
		// lists it for the redactor.
		for name, v := range h.Values {
			remember(name, v, "")
		}
		return harden()
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(p.scrub, name) || name == fdEnv
	})
	// First in place: blank the variables in the block the kernel shows
	// and take them out of the copy the processes this one starts
	// inherit. That spares a whole second start of the binary (its
	// runtime and package initialisation: tens of milliseconds of CPU
	// per `reasonix run`). Where that is not possible, re-exec.
	if scrubInPlace != nil {
		// Copies: a value must not share memory with the block blanked.
		for name, v := range h.Values {
			remember(name, strings.Clone(v), "")
		}
		if err := scrubInPlace(p.scrub); err == nil {
			for _, name := range p.scrub {
				os.Unsetenv(name)
			}
			return harden()
		}
	}
	return reexec(h, env)
}

// plan says which variables are secrets and which of them (and of their
// _FILE variables) the environment holds.
type plan struct {
	secrets []string // names to read
	scrub   []string // variables to take out of the environment
}

func newPlan(names []string, environ []string) plan {
	var p plan
	set := map[string]bool{}
	present := map[string]bool{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		present[name] = true
	}
	add := func(name string) {
		if name != "" && name != fdEnv && !set[name] {
			set[name] = true
			p.secrets = append(p.secrets, name)
		}
	}
	for _, n := range names {
		add(n)
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		base, isFile := strings.CutSuffix(name, FileSuffix)
		switch {
		case isFile && base != "" && Secretlike(base):
			add(base)
		case !isFile && Secretlike(name):
			add(name)
		}
	}
	for _, name := range p.secrets {
		for _, v := range []string{name, name + FileSuffix} {
			if present[v] {
				p.scrub = append(p.scrub, v)
			}
		}
	}
	slices.Sort(p.secrets)
	slices.Sort(p.scrub)
	return p
}

// detach replaces the process's environment with copies, so no string
// os.Getenv returns from now on shares memory with the exec-time block
// Seal blanks in place: Go's own copy of the environment points into it.
func detach() {
	env := os.Environ()
	os.Clearenv()
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			os.Setenv(k, v) // builds a new "k=v" string
		}
	}
}

// blank overwrites with zero bytes every entry of a NUL-separated
// environment block whose name is in names, and reports whether it found
// one.
func blank(block []byte, names []string) bool {
	found := false
	for off := 0; off < len(block); {
		n := bytes.IndexByte(block[off:], 0)
		if n < 0 {
			n = len(block) - off
		}
		entry := block[off : off+n]
		if name, _, ok := bytes.Cut(entry, []byte("=")); ok && slices.Contains(names, string(name)) {
			clear(entry)
			found = true
		}
		off += n + 1
	}
	return found
}
