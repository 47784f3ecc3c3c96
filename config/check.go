package config

import (
	"net/url"
	"slices"
	"strings"
)

// validEntryName reports whether name can identify a provider, plugin or
// workspace: it appears in model references ("provider/model") and tool
// names ("mcp__<server>__<tool>"), so it is kept to a safe alphabet.
func validEntryName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case (r == '.' || r == '_' || r == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// checkURL requires an absolute http(s) URL. The value itself is never put
// in the message: a URL may carry a token in its query.
func checkURL(p *problems, source, field, s string) {
	if s == "" {
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.add(source, field, "must be an absolute http:// or https:// URL")
	}
}

// checkEnvName requires the name of an environment variable. The value is
// not echoed: a common mistake is pasting the secret itself here.
func checkEnvName(p *problems, source, field, s string) {
	if s != "" && !validEnvName(s) {
		p.add(source, field, "must be the NAME of an environment variable (letters, digits and '_'), not the secret itself")
	}
}

func checkNonNegative(p *problems, source, field string, v int) {
	if v < 0 {
		p.add(source, field, "must not be negative (got %d)", v)
	}
}

func checkRange(p *problems, source, field string, v, lo, hi int) {
	if v < lo || v > hi {
		p.add(source, field, "must be between %d and %d (got %d)", lo, hi, v)
	}
}

func checkOneOf(p *problems, source, field, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		p.add(source, field, "%q is not one of %s", v, strings.Join(allowed, ", "))
	}
}

func checkStrings(p *problems, source, field string, list []string) {
	for i, s := range list {
		if strings.TrimSpace(s) == "" {
			p.add(source, field, "entry %d is empty", i)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
