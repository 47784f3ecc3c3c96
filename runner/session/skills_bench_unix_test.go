//go:build unix

package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix/agent/recipe"
	"reasonix/config"
)

// BenchmarkCheckoutSkills50 reads and loads 50 skills from disk (20 in
// the home, 30 in a [skills] paths root), the disk part of a task's
// start; the repository's part is workspace.BenchmarkReadBaseAt50. warm is
// a service's every start after its first (the files' stamps unchanged),
// cold one that reads every file (a fresh cache each time, as every start
// did before the cache). cpu-ns/op is the CPU time (see BenchmarkDecideCPU).
func BenchmarkCheckoutSkills50(b *testing.B) {
	home, team := b.TempDir(), b.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range 50 {
		root := filepath.Join(home, "skills")
		if i >= 20 {
			root = team
		}
		p := filepath.Join(root, fmt.Sprintf("s%d", i), "SKILL.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "---\ndescription: skill %d\n---\n%s\n", i, strings.Repeat("Step. ", 300)), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	sk := &config.Skills{Paths: []string{team}}
	for _, warm := range []bool{false, true} {
		b.Run(map[bool]string{false: "cold", true: "warm"}[warm], func(b *testing.B) {
			b.ReportAllocs()
			start, n := cpuTime(b), 0
			for b.Loop() {
				n++
				if !warm {
					diskSkills = new(recipe.DirCache)
				}
				ss := CheckoutSkills(home, sk, "")
				if ss.Len() != 50 || ss.Index() == "" {
					b.Fatalf("%d skills: %v", ss.Len(), ss.Warnings)
				}
			}
			b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(n), "cpu-ns/op")
		})
	}
}
