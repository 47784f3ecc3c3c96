package main

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"reasonix/config"
	"reasonix/internal/secretenv"
	"reasonix/runner/session"
)

// A configuration file that does not load (a syntax error, a key of the
// wrong type, an unknown key) used to end config check and doctor at its
// first line, so the next problem — an unset variable, a missing binary,
// a data directory nobody may write — showed only after the file was
// fixed. fileFreeChecks are the checks that need nothing the file says:
// they run over the defaults with the service's variables on top, and
// config check and doctor run them whatever became of the file.

// fileFreeCheck is one such check's verdict: ok or warn say what was
// found; err is a problem that would stop serve.
type fileFreeCheck struct {
	what     string
	ok, warn string
	err      error
}

// fileFreeChecks checks the environment (the service's variables), the
// paths (the Reasonix home and the data directory) and the binaries (git,
// the bash sandbox), in that order.
func fileFreeChecks() []fileFreeCheck {
	var out []fileFreeCheck
	cfg := config.Default()
	if err := applyServiceEnv(cfg, secretenv.Lookup); err != nil {
		out = append(out, fileFreeCheck{what: "environment", err: err})
	} else {
		var set []string
		for _, k := range []string{envAddr, envDataDir, envDSN, envConfig, "REASONIX_HOME"} {
			if lookupSet(secretenv.Lookup, k) != "" {
				set = append(set, "$"+k)
			}
		}
		out = append(out, fileFreeCheck{what: "environment", ok: cmp.Or(strings.Join(set, ", "), "no REASONIX_* variables") + " set; their values are usable"})
	}

	home, err := config.HomeDir()
	switch {
	case err != nil:
		out = append(out, fileFreeCheck{what: "home", err: err})
	case home == "":
		out = append(out, fileFreeCheck{what: "home", err: errors.New("no Reasonix home directory is known: set $REASONIX_HOME (or $HOME)")})
	default:
		out = append(out, dirCheck("home", home))
	}
	switch {
	case cfg.Store.Driver == config.DriverPostgres:
		out = append(out, fileFreeCheck{what: "data dir", ok: "the store is Postgres ($" + envDSN + ")"})
	case cmp.Or(cfg.Store.Path, home) != "":
		out = append(out, dirCheck("data dir", cmp.Or(cfg.Store.Path, home)))
	}

	if _, err := exec.LookPath("git"); err != nil {
		out = append(out, fileFreeCheck{what: "git", err: errors.New("git is not on PATH: workspaces need it")})
	} else {
		out = append(out, fileFreeCheck{what: "git", ok: "found"})
	}
	// The default [sandbox] bash = "auto": which sandbox this machine
	// offers. The file may ask for more; that is checked once it loads.
	switch kind, warning, err := session.SandboxStatus(cfg); {
	case err != nil:
		out = append(out, fileFreeCheck{what: "sandbox", warn: err.Error()})
	case kind != "":
		out = append(out, fileFreeCheck{what: "sandbox", ok: "bash can run in the " + kind + " sandbox"})
	default:
		out = append(out, fileFreeCheck{what: "sandbox", warn: warning})
	}
	return out
}

// dirCheck checks that dir is a directory the service can write, or one
// it can create (its nearest existing parent is writable).
func dirCheck(what, dir string) fileFreeCheck {
	at := dir
	for {
		st, err := os.Stat(at)
		if errors.Is(err, fs.ErrNotExist) {
			parent := filepath.Dir(at)
			if parent == at {
				return fileFreeCheck{what: what, err: fmt.Errorf("%s: no part of the path exists", dir)}
			}
			at = parent
			continue
		}
		if err != nil {
			return fileFreeCheck{what: what, err: fmt.Errorf("%s: %w", dir, err)}
		}
		if !st.IsDir() {
			return fileFreeCheck{what: what, err: fmt.Errorf("%s: %s is not a directory", dir, at)}
		}
		break
	}
	f, err := os.CreateTemp(at, ".reasonix-check-*")
	if err != nil {
		return fileFreeCheck{what: what, err: fmt.Errorf("%s cannot be written: %w", at, errors.Unwrap(err))}
	}
	f.Close()
	os.Remove(f.Name())
	if at != dir {
		return fileFreeCheck{what: what, ok: dir + " (does not exist yet; it can be created)"}
	}
	return fileFreeCheck{what: what, ok: dir + " (writable)"}
}
