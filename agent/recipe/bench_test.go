package recipe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLoadDirs500 loads 500 command files from disk, the way `run`
// and the chat help do (budget: 20 ms).
func BenchmarkLoadDirs500(b *testing.B) {
	repo := b.TempDir()
	for i := range 500 {
		dir := filepath.Join(repo, ProjectCommandsDir, fmt.Sprintf("ns%d", i%10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		body := fmt.Sprintf("---\ndescription: command %d\nargument-hint: [path]\n---\nReview $ARGUMENTS carefully; start with $1.\n", i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("cmd%d.md", i)), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		cs, _ := LoadDirs("", repo)
		if len(cs.Names()) != 500 {
			b.Fatal("not all commands loaded")
		}
	}
}

// BenchmarkLoadCommands500 is the parse alone, from files already read
// (what the service does with a repository's base tree).
func BenchmarkLoadCommands500(b *testing.B) {
	var fs []File
	for i := range 500 {
		fs = append(fs, File{Path: fmt.Sprintf("ns%d/cmd%d.md", i%10, i),
			Data: fmt.Appendf(nil, "---\ndescription: command %d\nargument-hint: [path]\n---\nReview $ARGUMENTS carefully; start with $1.\n", i)})
	}
	b.ReportAllocs()
	for b.Loop() {
		LoadCommands(Layer{ScopeProject, fs})
	}
}

func BenchmarkRender(b *testing.B) {
	c := NewCommand("review", "", "", ScopeProject, "Review the staged diff. Focus on $ARGUMENTS, list bugs with file:line; start with $1 and cost $$0.")
	args := []string{"pkg/foo", "pkg/bar"}
	b.ReportAllocs()
	for b.Loop() {
		_ = c.Render(args)
	}
}

// BenchmarkLoadSkills50 is what a task's start adds once the skill files
// are read: parse 50 skills (2 KiB bodies) and build the prompt's index.
func BenchmarkLoadSkills50(b *testing.B) {
	var fs []File
	for i := range 50 {
		fs = append(fs, File{Path: fmt.Sprintf("s%d/SKILL.md", i),
			Data: fmt.Appendf(nil, "---\ndescription: skill %d does one job\nargument-hint: [path]\n---\n%s\n", i, strings.Repeat("Step. ", 300))})
	}
	b.ReportAllocs()
	for b.Loop() {
		ss := LoadSkills(SkillOptions{Disabled: []string{"s7"}}, Layer{ScopeProject, fs})
		if ss.Len() != 49 || ss.Index() == "" {
			b.Fatal("not all skills loaded")
		}
	}
}
