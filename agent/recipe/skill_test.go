package recipe

import (
	"slices"
	"strings"
	"testing"
)

func TestLoadSkillsLayersFormatsAndWarnings(t *testing.T) {
	user := Layer{ScopeUser, files(
		"review/SKILL.md", "---\ndescription: user review\n---\nuser body",
		"notes.md", "---\ndescription: Take notes\n---\nWrite notes about $ARGUMENTS.",
	)}
	paths := Layer{ScopePath, files(
		"deploy.md", "---\ndescription: Deploy checklist\ninvocation: manual\n---\nCheck the deploy.",
	)}
	project := Layer{ScopeProject, files(
		"review/SKILL.md", "---\nname: review\ndescription: Review the diff\n---\nproject body",
		"review/references/guide.md", "not a skill of its own",
		"explore/SKILL.md", "---\nrunAs: subagent\ndescription: Explore the code\nread-only: true\n---\nYou explore.",
		"mismatch/SKILL.md", "---\nname: other\n---\nx",
		"empty.md", "---\ndescription: nothing\n---\n   ",
		"bad name/SKILL.md", "x",
		"unclosed.md", "---\ndescription: x\n",
		"old/SKILL.md", "retired",
	)}
	ss := LoadSkills(SkillOptions{Disabled: []string{"old", "never-existed"}}, user, paths, project)
	if got := ss.Names(); !slices.Equal(got, []string{"deploy", "explore", "notes", "review"}) {
		t.Fatalf("names = %v", got)
	}
	r, _ := ss.Lookup("review")
	if r.Body != "project body" || r.Scope != ScopeProject || r.Path != "review/SKILL.md" {
		t.Fatalf("review = %+v, want the project's", r)
	}
	var warned []string
	for _, w := range ss.Warnings {
		warned = append(warned, w.Path)
	}
	slices.Sort(warned)
	if want := []string{"bad name/SKILL.md", "empty.md", "mismatch/SKILL.md", "unclosed.md"}; !slices.Equal(warned, want) {
		t.Fatalf("warnings = %v, want %v", ss.Warnings, want)
	}
	if _, ok := ss.Lookup("old"); ok {
		t.Fatal("a disabled skill is loaded")
	}
	if p, ok := ss.Profiles().Lookup("explore"); !ok || !p.ReadOnly || p.SystemPrompt != "You explore." {
		t.Fatalf("explore profile = %+v %v", p, ok)
	}
	if _, ok := ss.Profiles().Lookup("review"); ok {
		t.Fatal("an inline skill is no profile")
	}
}

func TestSkillIndexIsStableAndLeavesManualOut(t *testing.T) {
	layer := func(order ...int) Layer {
		all := []File{
			{Path: "b/SKILL.md", Data: []byte("---\ndescription: Second \t skill\n---\nbody b")},
			{Path: "a.md", Data: []byte("---\ndescription: First skill\n---\nbody a")},
			{Path: "m/SKILL.md", Data: []byte("---\ndescription: Manual only\ninvocation: manual\n---\nbody m")},
			{Path: "s/SKILL.md", Data: []byte("---\nrunAs: subagent\ndescription: " + strings.Repeat("long ", 80) + "\n---\nbody s")},
		}
		var fs []File
		for _, i := range order {
			fs = append(fs, all[i])
		}
		return Layer{ScopeProject, fs}
	}
	one := LoadSkills(SkillOptions{}, layer(0, 1, 2, 3)).Index()
	two := LoadSkills(SkillOptions{}, layer(3, 2, 1, 0)).Index()
	if one != two {
		t.Fatalf("the index depends on file order:\n%q\n%q", one, two)
	}
	for _, want := range []string{"\n- a: First skill\n", "\n- b: Second skill\n", "\n- s (sub-agent): long long"} {
		if !strings.Contains(one, want) {
			t.Errorf("index lacks %q:\n%s", want, one)
		}
	}
	if strings.Contains(one, "Manual only") || strings.Contains(one, "- m") {
		t.Errorf("a manual skill is in the index:\n%s", one)
	}
	for line := range strings.SplitSeq(one, "\n") {
		if strings.HasPrefix(line, "- ") && len(line) > 64+maxIndexDescription+20 {
			t.Errorf("index line not bounded: %d bytes", len(line))
		}
	}
	if LoadSkills(SkillOptions{}).Index() != "" {
		t.Error("an empty set has an index")
	}
}

func TestSkillRenderAndCommand(t *testing.T) {
	ss := LoadSkills(SkillOptions{}, Layer{ScopeProject, files(
		"fix.md", "---\nargument-hint: [issue]\n---\nFix issue $1 ($ARGUMENTS), cost $$0.",
		"plain.md", "Follow the checklist.",
		"worker/SKILL.md", "---\nrunAs: subagent\n---\nYou work.",
	)})
	fix, _ := ss.Lookup("fix")
	if got := fix.Render([]string{"42", "now"}); got != "Fix issue 42 (42 now), cost $0." {
		t.Errorf("render = %q", got)
	}
	plain, _ := ss.Lookup("plain")
	if got := plain.Render([]string{"a", "b"}); got != "Follow the checklist.\n\nArguments: a b" {
		t.Errorf("arguments of a body without placeholders were lost: %q", got)
	}
	if got := plain.Render(nil); got != "Follow the checklist." {
		t.Errorf("render without arguments = %q", got)
	}
	cs := LoadCommands(Layer{ScopeProject, files("plain.md", "the command file wins")})
	ss.Commands(cs)
	if c, _ := cs.Lookup("plain"); c.Render(nil) != "the command file wins" {
		t.Errorf("a skill replaced a command file: %q", c.Render(nil))
	}
	c, ok := cs.Lookup("fix")
	if !ok || c.Render([]string{"7"}) != "Fix issue 7 (7), cost $0." || c.ArgumentHint != "[issue]" {
		t.Fatalf("/fix = %+v", c)
	}
	w, _ := cs.Lookup("worker")
	if got := w.Render([]string{"map", "the", "code"}); !strings.Contains(got, `run_skill (name "worker")`) || !strings.HasSuffix(got, "map the code") {
		t.Errorf("/worker = %q", got)
	}
}

func TestLoadSkillsBoundsTheCount(t *testing.T) {
	var fs []File
	for i := range MaxSkills + 5 {
		fs = append(fs, File{Path: string(rune('a'+i%26)) + strings.Repeat("x", i/26) + ".md", Data: []byte("body")})
	}
	ss := LoadSkills(SkillOptions{}, Layer{ScopeProject, fs})
	if ss.Len() != MaxSkills || len(ss.Warnings) != 5 {
		t.Fatalf("%d skills, %d warnings", ss.Len(), len(ss.Warnings))
	}
}
