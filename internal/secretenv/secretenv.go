// Package secretenv is the one place the process reads its secrets (API
// keys, bot tokens, webhook secrets, the store DSN, the admin token) from,
// and the one place that takes them out of the environment the kernel
// shows to other processes.
//
// A secret is named by an environment variable NAME and found, in this
// order:
//
//  1. $NAME, when set and not empty;
//  2. the file $NAME_FILE names (the Docker and Kubernetes convention);
//  3. $CREDENTIALS_DIRECTORY/NAME (systemd's LoadCredential=).
//
// One trailing newline of a file is dropped: editors and `echo` add one.
//
// os.Unsetenv does not change /proc/<pid>/environ: the kernel shows the
// block the process was exec'd with, for its whole life, to every process
// of the same user. So Seal, called once the configuration says which
// variables are secrets, reads them into memory, takes them out of the
// environment the processes it starts inherit, and overwrites them with
// zero bytes in that block itself (the process's own stack, written
// through /proc/self/mem). Where that cannot be done it re-execs the same
// binary with the same arguments and an environment without them, handing
// the values over through an inherited memory file descriptor (never argv
// or the environment); the new image reads them back (Receive). Either
// way the process ends marked not dumpable, so /proc/<pid>/{mem,environ,
// maps,fd} of the service are not readable by the processes it starts.
//
// The state is process-wide, as the environment is; every function is safe
// for concurrent use.
package secretenv

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// CredentialsDirEnv is the variable systemd sets to the directory holding
// the credentials LoadCredential= gave the unit.
const CredentialsDirEnv = "CREDENTIALS_DIRECTORY"

// FileSuffix turns a secret's variable name into the name of the variable
// that holds a path to it.
const FileSuffix = "_FILE"

// maxFileSize bounds a secret file: a wrong path (a log, an image) fails
// instead of filling memory.
const maxFileSize = 64 << 10

var state struct {
	mu sync.Mutex
	// values holds every secret Seal took out of the environment (or the
	// image before a re-exec handed over) and every one read from a file
	// so far.
	values map[string]string
	// files lists the files secrets were read from, for forbid_read.
	files []string
	// received is true in the image Seal exec'd: it never re-execs again.
	received bool
}

// Lookup finds the secret NAME as the package comment says: the handed-over
// value, the variable, its _FILE, then the systemd credential. ok is false
// when none holds it. A _FILE that names an unreadable file counts as
// unset; Check reports why.
func Lookup(name string) (string, bool) {
	v, ok, _ := lookup(name)
	return v, ok
}

// Getenv is Lookup without the second result, like os.Getenv.
func Getenv(name string) string {
	v, _ := Lookup(name)
	return v
}

// Check is Lookup with the reason a _FILE or credential file could not be
// read (nil when it was, or when nothing names one).
func Check(name string) (string, bool, error) { return lookup(name) }

func lookup(name string) (string, bool, error) {
	if name == "" {
		return "", false, nil
	}
	state.mu.Lock()
	v, ok := state.values[name]
	state.mu.Unlock()
	if ok {
		return v, true, nil
	}
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v, true, nil
	}
	path := ""
	if p, ok := os.LookupEnv(name + FileSuffix); ok && p != "" {
		path = p
	} else if dir, ok := os.LookupEnv(CredentialsDirEnv); ok && dir != "" && validName(name) {
		path = filepath.Join(dir, name)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			v, ok := os.LookupEnv(name) // set but empty, as os.LookupEnv says
			return v, ok, nil
		}
	} else {
		v, ok := os.LookupEnv(name)
		return v, ok, nil
	}
	v, err := readSecretFile(path)
	if err != nil {
		return "", false, &FileError{Name: name, Path: path, Err: err}
	}
	remember(name, v, path)
	return v, true, nil
}

// remember keeps a value read from a file, so the file is read once.
func remember(name, v, path string) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.values == nil {
		state.values = map[string]string{}
	}
	state.values[name] = v
	if path != "" && !slices.Contains(state.files, path) {
		state.files = append(state.files, path)
	}
}

// rememberFile records a file a secret was read from.
func rememberFile(path string) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if !slices.Contains(state.files, path) {
		state.files = append(state.files, path)
	}
}

// FileError says which secret file could not be read; it never holds the
// secret.
type FileError struct {
	Name, Path string
	Err        error
}

func (e *FileError) Error() string {
	return "secretenv: $" + e.Name + " from " + e.Path + ": " + e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

func readSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return "", err
	}
	if len(data) > maxFileSize {
		return "", errors.New("larger than 64 KiB")
	}
	s := strings.TrimSuffix(string(data), "\n")
	return strings.TrimSuffix(s, "\r"), nil
}

// Values lists every secret value this process holds: handed over at
// start or read from a file. The redactor masks them all.
func Values() []string {
	state.mu.Lock()
	defer state.mu.Unlock()
	out := make([]string, 0, len(state.values))
	for _, v := range state.values {
		if v != "" {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// Files lists the files secrets were read from and the systemd credentials
// directory, when set: places a task's tools must not read.
func Files() []string {
	state.mu.Lock()
	out := slices.Clone(state.files)
	state.mu.Unlock()
	if dir := os.Getenv(CredentialsDirEnv); dir != "" && !slices.Contains(out, dir) {
		out = append(out, dir)
	}
	return out
}

// Secretlike reports whether a variable's name says it holds a secret: its
// last word (split at "_") is TOKEN, SECRET, KEY, APIKEY, PASSWORD,
// PASSWD, DSN or CREDENTIALS, or a word is SECRET, TOKEN or PASSWORD
// (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, PGPASSWORD is not caught: name it
// in the configuration). Such variables leave the environment the kernel
// shows even when no configuration key names them. SSH_AUTH_SOCK and
// GIT_ASKPASS stay: they name a socket and a program, not a secret.
func Secretlike(name string) bool {
	words := strings.Split(strings.ToUpper(name), "_")
	switch words[len(words)-1] {
	case "TOKEN", "SECRET", "KEY", "APIKEY", "PASSWORD", "PASSWD", "DSN", "CREDENTIALS":
		return true
	}
	for _, w := range words {
		switch w {
		case "SECRET", "TOKEN", "PASSWORD":
			return true
		}
	}
	return false
}

// validName keeps a credential lookup inside the credentials directory.
func validName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`)
}
