package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// DefaultCompactRatio is [agent] compact_ratio when no file sets it: the
// conversation is compacted when its prompt reaches 90% of the window.
const DefaultCompactRatio = 0.90

// CompactRatioMin and CompactRatioMax are the exclusive bounds of
// compact_ratio: 0 would compact before every request, 1 only after the
// provider already refused the prompt.
const (
	CompactRatioMin = 0.0
	CompactRatioMax = 1.0
)

// DefaultContextWindow is the context window, in tokens, of a provider
// entry that does not set context_window: what the common models of each
// wire offer. An endpoint serving a smaller model (a local one) must say so,
// or compaction starts too late for it.
func DefaultContextWindow(kind string) int {
	if kind == "anthropic" {
		return 200_000
	}
	return 128_000
}

// CheckCompactRatio reports whether r is a usable compact_ratio.
func CheckCompactRatio(r float64) error {
	if math.IsNaN(r) || r <= CompactRatioMin || r >= CompactRatioMax {
		return fmt.Errorf("must be strictly between %g and %g (got %g); the default is %g",
			CompactRatioMin, CompactRatioMax, r, DefaultCompactRatio)
	}
	return nil
}

// validateCompactRatio checks the ratio when a file or flag set it, or when
// code built the Config with a non-zero value (zero there means the default).
func (a *Agent) validateCompactRatio(c *Config, p *problems) {
	src := c.origins["agent.compact_ratio"]
	if src == "" && a.CompactRatio == 0 {
		return
	}
	if err := CheckCompactRatio(a.CompactRatio); err != nil {
		p.add(src, "agent.compact_ratio", "%s", err)
	}
}

// EffectiveCompactRatio is the ratio a run uses: CompactRatio, or the
// default when it is zero (a Config built in code).
func (a *Agent) EffectiveCompactRatio() float64 {
	if a.CompactRatio == 0 {
		return DefaultCompactRatio
	}
	return a.CompactRatio
}

// markContextWindows records which [[providers]] entries of one file set
// context_window themselves. The struct field cannot tell "0" (compaction
// off) from "not written", so the file is decoded once more into pointers.
func markContextWindows(data []byte, providers []Provider) {
	var doc struct {
		Providers []struct {
			ContextWindow *int `toml:"context_window"`
		} `toml:"providers"`
	}
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return // the first decode succeeded; this one cannot fail differently
	}
	for i := range providers {
		if i < len(doc.Providers) && doc.Providers[i].ContextWindow != nil {
			providers[i].windowSet = true
		}
	}
}

// agentHeader and compactRatioLine find the [agent] table and its
// compact_ratio key in a TOML file, for the line edit WriteCompactRatio makes.
var (
	tableHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*\[\[?\s*([A-Za-z0-9_.\-" ]+?)\s*\]\]?\s*(#.*)?$`)
	})
	compactRatioLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*compact_ratio\s*=`) })
)

// WriteCompactRatio sets [agent] compact_ratio = r in the user config file
// of home, keeping every other line (and comment) as it is, and returns the
// file's path. The file is created when missing. An invalid r, or a file
// that does not load afterwards, is an error and leaves the file unchanged.
func WriteCompactRatio(home string, r float64) (string, error) {
	if err := CheckCompactRatio(r); err != nil {
		return "", fmt.Errorf("config: agent.compact_ratio: %w", err)
	}
	if home == "" {
		return "", errors.New("config: no Reasonix home directory is known; set $REASONIX_HOME")
	}
	path := filepath.Join(home, UserFile)
	old, found, err := readFile(path)
	if err != nil {
		return "", &FileError{File: path, Err: err}
	}
	next, err := editCompactRatio(string(old), r)
	if err != nil {
		return "", &FileError{File: path, Key: "agent.compact_ratio", Err: err}
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	mode := os.FileMode(0o600)
	if found {
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(next), mode); err != nil {
		return "", fmt.Errorf("config: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("config: %w", err)
	}
	return path, nil
}

// editCompactRatio is setCompactRatio checked: the result must decode, with
// the new value in place, or the file is left to the person.
func editCompactRatio(src string, r float64) (string, error) {
	next, err := setCompactRatio(src, r)
	if err != nil {
		return "", err
	}
	var check struct {
		Agent struct {
			CompactRatio float64 `toml:"compact_ratio"`
		} `toml:"agent"`
	}
	if _, err := toml.Decode(next, &check); err != nil || check.Agent.CompactRatio != r {
		return "", errors.New("the file's layout defeats an automatic edit; set compact_ratio under [agent] by hand")
	}
	return next, nil
}

// setCompactRatio rewrites src with [agent] compact_ratio = r: the key's
// line when [agent] has one, else a new line right under the [agent]
// header, else a new [agent] table at the end. An [agent] written as an
// inline table or dotted keys is left to the person.
func setCompactRatio(src string, r float64) (string, error) {
	line := "compact_ratio = " + strconv.FormatFloat(r, 'f', -1, 64)
	if !strings.Contains(line[len("compact_ratio = "):], ".") {
		line += ".0"
	}
	lines := strings.Split(src, "\n")
	inAgent, header := false, -1
	for i, l := range lines {
		if m := tableHeader().FindStringSubmatch(l); m != nil && !strings.Contains(l, "=") {
			inAgent = strings.TrimSpace(m[1]) == "agent" && !strings.HasPrefix(strings.TrimSpace(l), "[[")
			if inAgent {
				header = i
			}
			continue
		}
		trimmed := strings.TrimSpace(l)
		if header < 0 && (strings.HasPrefix(trimmed, "agent.") || strings.HasPrefix(trimmed, "agent =") || strings.HasPrefix(trimmed, "agent=")) {
			return "", errors.New("[agent] is written with dotted keys or an inline table; set compact_ratio there by hand")
		}
		if inAgent && compactRatioLine().MatchString(l) {
			lines[i] = line
			return strings.Join(lines, "\n"), nil
		}
	}
	if header >= 0 {
		lines = append(lines[:header+1], append([]string{line}, lines[header+1:]...)...)
		return strings.Join(lines, "\n"), nil
	}
	out := src
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	if out != "" {
		out += "\n"
	}
	return out + "[agent]\n" + line + "\n", nil
}
