package main

import (
	"reasonix/config"
	"reasonix/internal/secretenv"
)

// sealSecrets is set by main: only the real binary takes its secrets out
// of its environment. Tests drive cli in-process, where that would empty
// the test binary's environment (or, on the re-exec fallback, replace it).
var sealSecrets bool

// sealEnvironment takes the secrets cfg names (and every variable whose
// name looks like a secret's) out of the environment the kernel shows for
// this process, keeping them in memory for secretenv.Lookup. In place when
// it can: the exec-time block is blanked, nothing is started again.
// Otherwise it re-execs with the same arguments and returns only in the
// new image (where it finds nothing left to take out) or on failure. Call
// it right after the configuration is loaded, before anything is opened,
// started or locked, since after a re-exec all of that happens again.
func sealEnvironment(cfg *config.Config) error {
	if !sealSecrets {
		return nil
	}
	names := append(cfg.SecretEnvNames(), "REASONIX_API_TOKEN", envDSN)
	if err := secretenv.Seal(names); err != nil {
		return &configError{err}
	}
	return nil
}
