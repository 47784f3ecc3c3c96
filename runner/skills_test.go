package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/store"
)

// [skills]: a paths root adds skills, disabled_skills hides one wherever
// it comes from, and excluded_paths ".reasonix/skills" hides the
// repository's; what is hidden is no command either.
func TestSkillsConfigShapesTheCommands(t *testing.T) {
	repo := commandRepo(t, map[string]string{
		".reasonix/skills/review/SKILL.md": "Review $ARGUMENTS from the repository.",
		".reasonix/skills/old.md":          "Retired.",
	})
	team := t.TempDir()
	if err := os.MkdirAll(filepath.Join(team, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(team, "deploy", "SKILL.md"), []byte("Deploy $1 from the team's root."), 0o644); err != nil {
		t.Fatal(err)
	}
	submit := func(svc *runner.Service, name string) (string, error) {
		task, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:t",
			Command: name, Args: []string{"x"}, Workspace: "w"})
		return task.Prompt, err
	}
	invalid := func(err error) bool {
		var re *runner.Error
		return errors.As(err, &re) && errors.Is(re.Kind, runner.ErrInvalid)
	}

	set := config.Default()
	set.Skills = config.Skills{Paths: []string{team}, DisabledSkills: []string{"old"}}
	svc := commandService(t, repo, set)
	if p, err := submit(svc, "deploy"); err != nil || p != "Deploy x from the team's root." {
		t.Fatalf("/deploy = %q, %v", p, err)
	}
	if p, err := submit(svc, "review"); err != nil || p != "Review x from the repository." {
		t.Fatalf("/review = %q, %v", p, err)
	}
	if _, err := submit(svc, "old"); !invalid(err) {
		t.Fatalf("a disabled skill ran: %v", err)
	}

	set = config.Default()
	set.Skills = config.Skills{Paths: []string{team}, ExcludedPaths: []string{config.ProjectSkillsDir, team}}
	svc = commandService(t, repo, set)
	for _, name := range []string{"review", "deploy"} {
		if _, err := submit(svc, name); !invalid(err) || !strings.Contains(err.Error(), "unknown command") {
			t.Fatalf("/%s from an excluded root: %v", name, err)
		}
	}
}
