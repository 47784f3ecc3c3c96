package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// TrustFile, in the Reasonix home, lists the project directories whose own
// reasonix.toml and .mcp.json `reasonix run` obeys in full. Only
// `reasonix trust` writes it; a project file can never trust itself.
const TrustFile = "trusted.toml"

// ErrUntrusted is wrapped by the error Load returns when an untrusted
// project file sets a key that would loosen the policy or start a process.
var ErrUntrusted = errors.New("the directory is not trusted")

// trustDoc is the content of TrustFile.
type trustDoc struct {
	Dirs []string `toml:"dirs"`
}

// HomeDir is the Reasonix home Load uses by default ($REASONIX_HOME, else
// ~/.reasonix); "" when no home directory is known.
func HomeDir() (string, error) { return reasonixHome(LoadOptions{}, os.LookupEnv) }

// TrustedDirs lists the trusted project directories recorded in home.
func TrustedDirs(home string) ([]string, error) {
	data, found, err := readFile(filepath.Join(home, TrustFile))
	if !found || err != nil {
		return nil, err
	}
	var doc trustDoc
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, decodeError(filepath.Join(home, TrustFile), err)
	}
	return doc.Dirs, nil
}

// Trust records dir (made absolute and symlink-free) as trusted in home.
func Trust(home, dir string) (string, error) {
	abs, err := canonicalDir(dir)
	if err != nil {
		return "", err
	}
	dirs, err := TrustedDirs(home)
	if err != nil {
		return "", err
	}
	if slices.Contains(dirs, abs) {
		return abs, nil
	}
	var b bytes.Buffer
	b.WriteString("# Written by `reasonix trust`: project directories whose own reasonix.toml and\n# .mcp.json are obeyed in full.\n")
	if err := toml.NewEncoder(&b).Encode(trustDoc{Dirs: append(dirs, abs)}); err != nil {
		return "", err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	tmp := filepath.Join(home, TrustFile+".tmp")
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(home, TrustFile)); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	return abs, nil
}

func canonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return "", fmt.Errorf("config: %s is not a directory", dir)
	}
	return abs, nil
}

// tighteningKeys may be set by an untrusted project file: they add rules,
// lower limits or change what the model is told, never what it may do
// unasked. The checked ones may only move toward the stricter value.
var tighteningKeys = []string{
	"permissions.deny", "permissions.ask", "sandbox.forbid_read",
	"agent.", "tools.enabled", "tools.bash_timeout_seconds",
	"tools.mcp_startup_timeout_seconds", "tools.mcp_call_timeout_seconds",
}

// untrustedProblems lists the keys an untrusted project file sets that
// would loosen the configuration below it (in l.c) or start a process.
func (l *loader) untrustedProblems(fc *Config, md *toml.MetaData) []string {
	var bad []string
	for _, k := range md.Keys() {
		key := k.String()
		if md.Type(k...) == "Hash" {
			continue // a table is judged by the keys inside it
		}
		switch key {
		case "permissions.posture":
			if fc.Permissions.Posture.Rank() > l.c.Permissions.Posture.Rank() {
				bad = append(bad, key)
			}
			continue
		case "permissions.mode":
			if modeRank(fc.Permissions.Mode) > modeRank(l.c.Permissions.Mode) {
				bad = append(bad, key)
			}
			continue
		case "sandbox.network":
			if fc.Sandbox.Network {
				bad = append(bad, key)
			}
			continue
		}
		if !slices.ContainsFunc(tighteningKeys, func(p string) bool {
			return key == p || strings.HasSuffix(p, ".") && strings.HasPrefix(key, p)
		}) {
			bad = append(bad, key)
		}
	}
	return bad
}

// modeRank orders [permissions] mode by what it lets writers do unasked.
func modeRank(m string) int {
	switch m {
	case ModeDeny:
		return 0
	case ModeAllow:
		return 2
	}
	return 1 // ask, and the default
}

func untrustedError(path, what, dir string) error {
	return &FileError{File: path, Err: fmt.Errorf("%s, and %w; trust it with `reasonix trust %s` (or pass --trust for one run)",
		what, ErrUntrusted, dir)}
}

// untrustedDir is dir when the trust file of home does not list it, else "".
func untrustedDir(home, dir string) (string, error) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if home == "" {
		return dir, nil
	}
	dirs, err := TrustedDirs(home)
	if err != nil {
		return "", err
	}
	if slices.Contains(dirs, dir) {
		return "", nil
	}
	return dir, nil
}

// quoteKeys names keys for a message, outermost first, each once.
func quoteKeys(keys []string) string {
	var out []string
	for _, k := range keys {
		if !slices.ContainsFunc(out, func(o string) bool { return strings.HasPrefix(k, strings.Trim(o, `"`)+".") }) {
			out = append(out, fmt.Sprintf("%q", k))
		}
	}
	if len(out) == 1 {
		return "key " + out[0]
	}
	return "keys " + strings.Join(out, ", ")
}
