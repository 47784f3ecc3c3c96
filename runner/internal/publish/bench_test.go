package publish_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"reasonix/runner/forge"
	"reasonix/runner/internal/publish"
	"reasonix/runner/store"
)

// BenchmarkDrive measures publishing after a task's last step on
// loopback: claim the record, push the branch to a real git server, look
// for and open the pull request, record it. The budget is 1.5 s; it
// reports the median (ms/median) beside the mean.
func BenchmarkDrive(b *testing.B) {
	for _, kind := range []forge.Kind{forge.GitHub, forge.GitLab} {
		b.Run(string(kind), func(b *testing.B) {
			bn := newBench(b, kind)
			p := bn.publisher("node-a", nil)
			var took []time.Duration
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				if i > 0 { // a fresh task and branch each time
					task, _, err := bn.st.CreateTask(ctx, store.NewTask{Source: store.SourceAPI, Requester: "token:admin", Prompt: "fix"})
					if err != nil {
						b.Fatal(err)
					}
					bn.task, bn.branch = task.ID, "reasonix/"+task.ID
					bn.run("checkout", "--quiet", "-b", bn.branch, "main")
					bn.run("commit", "--quiet", "--allow-empty", "-m", "the fix")
					bn.commit = bn.run("rev-parse", "HEAD")
				}
				bn.succeed()
				b.StartTimer()
				start := time.Now()
				if _, err := p.Drive(ctx, bn.task, bn.target(publish.ModePR)); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms/median")
		})
	}
}
