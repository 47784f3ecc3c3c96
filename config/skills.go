package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Skills is the [skills] table (seed §5): where skills come from beyond
// the repository's .reasonix/skills and the Reasonix home's skills/, and
// which are hidden.
type Skills struct {
	// Paths are further skill roots on this machine's disk, read like
	// the home's skills/ (a leading ~/ is the home directory, ${VAR} is
	// expanded, a relative path is relative to the file that set it).
	// An untrusted project file cannot set them: reading a directory is
	// the owner's decision, not the checkout's.
	Paths []string `toml:"paths"`
	// ExcludedPaths hides skill roots without deleting them: an entry
	// naming the home's skills directory or one of Paths (written like
	// them), or exactly ".reasonix/skills" for the repository's.
	ExcludedPaths []string `toml:"excluded_paths"`
	// DisabledSkills are skill names hidden from the prompt's index,
	// from /<name>, from read_skill and run_skill, and as profiles.
	DisabledSkills []string `toml:"disabled_skills"`
	// SuppressWarnings logs skipped skill files at debug level instead of
	// as warnings; `reasonix commands list` still shows them.
	SuppressWarnings bool `toml:"suppress_warnings"`
}

// ProjectSkillsDir is the repository's skills root as an excluded_paths
// entry names it.
const ProjectSkillsDir = ".reasonix/skills"

// Roots is Paths less the excluded ones, in order.
func (s *Skills) Roots() []string {
	var out []string
	for _, p := range s.Paths {
		if !s.Excluded(p) {
			out = append(out, p)
		}
	}
	return out
}

// Excluded reports whether excluded_paths hides the skill root dir (an
// absolute directory, or ProjectSkillsDir for the repository's).
func (s *Skills) Excluded(dir string) bool {
	if dir == ProjectSkillsDir {
		return slices.Contains(s.ExcludedPaths, ProjectSkillsDir)
	}
	dir = filepath.Clean(dir)
	for _, e := range s.ExcludedPaths {
		if e != ProjectSkillsDir && filepath.Clean(e) == dir {
			return true
		}
	}
	return false
}

// finishPaths expands and resolves Paths and ExcludedPaths (the
// repository entry stays as written).
func (s *Skills) finishPaths(c *Config, e expander, env func(string) (string, bool)) {
	for _, f := range []struct {
		key   string
		paths []string
	}{{"skills.paths", s.Paths}, {"skills.excluded_paths", s.ExcludedPaths}} {
		origin := c.origins[f.key]
		e.list(f.paths, origin, f.key)
		for i, p := range f.paths {
			if p == ProjectSkillsDir && f.key == "skills.excluded_paths" {
				continue
			}
			if p == "~" || strings.HasPrefix(p, "~/") {
				if h, ok := env("HOME"); ok && h != "" {
					p = filepath.Join(h, strings.TrimPrefix(p, "~"))
				}
			}
			f.paths[i] = resolveFrom(p, origin)
		}
	}
}

func (s *Skills) validate(c *Config, p *problems) {
	for _, f := range []struct {
		key   string
		paths []string
	}{{"skills.paths", s.Paths}, {"skills.excluded_paths", s.ExcludedPaths}} {
		for i, path := range f.paths {
			if path != ProjectSkillsDir && !filepath.IsAbs(path) {
				p.add(c.origins[f.key], fmt.Sprintf("%s[%d]", f.key, i), "%q must be an absolute directory, ~/..., or relative to the file", path)
			}
		}
	}
	for i, n := range s.DisabledSkills {
		if !validSkillName(n) {
			p.add(c.origins["skills.disabled_skills"], fmt.Sprintf("skills.disabled_skills[%d]", i),
				"%q is not a skill name (letters, digits, '-' and '_')", n)
		}
	}
}

func validSkillName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
