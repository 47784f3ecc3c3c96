package runner_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent"
	"reasonix/config"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/workspace"
)

// slowModel answers each request after latency, as a real model takes a
// while: a task's first request gets a write_file of a file named after
// its prompt, its second a bash call, the third a final answer.
type slowModel struct{ latency time.Duration }

func (slowModel) Name() string { return "slow" }

func (m slowModel) Stream(ctx context.Context, req agent.Request) (<-chan agent.Chunk, error) {
	var prompt string
	tools := 0
	for _, msg := range req.Messages {
		switch msg.Role {
		case agent.RoleUser:
			if prompt == "" {
				prompt = msg.Content
			}
		case agent.RoleTool:
			tools++
		}
	}
	var chunks []agent.Chunk
	switch tools {
	case 0:
		tc := call("w", "write_file", map[string]string{"path": prompt + ".txt", "content": prompt + "\n"})
		chunks = append(chunks, agent.Chunk{Type: agent.ChunkToolCall, ToolCall: &tc})
	case 1:
		tc := call("b", "bash", map[string]string{"command": "git status --short"})
		chunks = append(chunks, agent.Chunk{Type: agent.ChunkToolCall, ToolCall: &tc})
	default:
		chunks = append(chunks, agent.Chunk{Type: agent.ChunkText, Text: "done"})
	}
	finish := "stop"
	if tools < 2 {
		finish = "tool_calls"
	}
	chunks = append(chunks, agent.Chunk{Type: agent.ChunkUsage, Usage: agent.Usage{Prompt: 100, Completion: 10}},
		agent.Chunk{Type: agent.ChunkDone, FinishReason: finish})
	out := make(chan agent.Chunk, len(chunks))
	go func() {
		defer close(out)
		t := time.NewTimer(m.latency)
		defer t.Stop()
		select {
		case <-t.C:
			for _, c := range chunks {
				out <- c
			}
		case <-ctx.Done():
		}
	}()
	return out, nil
}

// BenchmarkWorkspaceParallel runs one task of a git workspace, then eight
// at once on eight workers (max_parallel at its default), and reports the
// median of eight's wall time over one's ("ratio"; the budget is
// 2.5), and both times. Each task makes three model requests of latency
// each (a file write, a bash call, the answer); latency=0 shows the
// service's and git's own share alone.
func BenchmarkWorkspaceParallel(b *testing.B) {
	for _, latency := range []time.Duration{0, 250 * time.Millisecond} {
		b.Run(fmt.Sprint("latency=", latency), func(b *testing.B) {
			repo := gitRepo(b)
			wm, err := workspace.New(workspace.Config{Root: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			set := settings(8)
			set.Workspaces = []config.Workspace{{Name: "repo", Repo: repo, Base: "main"}}
			svc := runnertest.Start(b, runnertest.Options{Provider: slowModel{latency}, Settings: set,
				Configure: func(c *runner.Config) { c.Workspaces = runner.NewWorkspaces(wm) }})
			ctx := context.Background()
			var seq atomic.Int64
			run := func(n int) time.Duration {
				start := time.Now()
				var ids []string
				for range n {
					task, _, err := svc.Submit(ctx, runner.TaskRequest{Source: store.SourceAPI,
						Prompt: fmt.Sprint("task", seq.Add(1)), Workspace: "repo", Posture: "auto"})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, task.ID)
				}
				for _, id := range ids {
					done := runnertest.WaitState(b, svc, id, 2*time.Minute, store.StateSucceeded, store.StateFailed, store.StateBlocked)
					if done.State != store.StateSucceeded || done.Result == nil || done.Result.DiffStat == "" {
						b.Fatalf("task %s = %s %+v", id, done.State, done.Result)
					}
				}
				return time.Since(start)
			}
			run(1) // warm up: the first worktree, the store's caches
			var ratios, ones, eights []float64
			for b.Loop() {
				one, eight := run(1), run(8)
				ratios = append(ratios, eight.Seconds()/one.Seconds())
				ones = append(ones, float64(one.Milliseconds()))
				eights = append(eights, float64(eight.Milliseconds()))
			}
			b.ReportMetric(medianOf(ratios), "ratio")
			b.ReportMetric(medianOf(ones), "one-ms")
			b.ReportMetric(medianOf(eights), "eight-ms")
		})
	}
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
