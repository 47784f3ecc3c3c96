package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// An untrusted checkout may hide skills but never name a directory to
// read: its paths are left out with a warning, whatever they point at
// (outside the project, through .., or the home).
func TestUntrustedSkillPathsAreLeftOut(t *testing.T) {
	for _, paths := range []string{`["/etc"]`, `["../outside"]`, `["~/.ssh"]`, `["skills"]`} {
		f := newFixture(t)
		f.user("[skills]\npaths = [\"/srv/team-skills\"]\n")
		f.proj("[skills]\npaths = " + paths + "\ndisabled_skills = [\"review\"]\nexcluded_paths = [\".reasonix/skills\"]\n")
		c, err := f.loadUntrusted()
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Skills.Paths) != 1 || c.Skills.Paths[0] != "/srv/team-skills" {
			t.Errorf("paths %s: the untrusted file reached the skill roots: %q", paths, c.Skills.Paths)
		}
		if !strings.Contains(strings.Join(c.Warnings(), "\n"), `"skills.paths"`) {
			t.Errorf("paths %s: no warning: %q", paths, c.Warnings())
		}
		if c.Skills.DisabledSkills[0] != "review" || !c.Skills.Excluded(ProjectSkillsDir) {
			t.Errorf("hiding keys did not apply: %+v", c.Skills)
		}
	}
}

func TestSkillsPathsResolveAndValidate(t *testing.T) {
	f := newFixture(t)
	f.env["HOME"] = "/home/x"
	file := f.user("[skills]\npaths = [\"~/mine\", \"team\", \"/abs\"]\nexcluded_paths = [\"/abs\"]\n")
	c := f.load()
	want := []string{"/home/x/mine", filepath.Join(filepath.Dir(file), "team"), "/abs"}
	for i, p := range want {
		if c.Skills.Paths[i] != p {
			t.Errorf("paths[%d] = %q, want %q", i, c.Skills.Paths[i], p)
		}
	}
	if roots := c.Skills.Roots(); len(roots) != 2 || c.Skills.Excluded(ProjectSkillsDir) {
		t.Errorf("roots = %q", roots)
	}
	f.user("[skills]\ndisabled_skills = [\"../x\"]\n")
	wantContains(t, f.loadErr(), `skills.disabled_skills[0]: "../x" is not a skill name`)
}
