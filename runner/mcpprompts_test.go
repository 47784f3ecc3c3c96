package runner_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"reasonix/agent/recipe"
	"reasonix/config"
	"reasonix/mcp/mcptest"
	"reasonix/runner"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
)

// promptPlugin is a [[plugins]] entry for a real MCP server (streamable
// HTTP on loopback) that offers the prompt "summarize <path>".
func promptPlugin(t *testing.T) config.Plugin {
	srv := mcptest.NewHTTPPromptServer(t, "docs", []mcptest.Prompt{{
		Name: "summarize", Description: "Summarize a package", Arguments: []string{"path"},
		Text: func(args map[string]string) string { return "Summarize the package " + args["path"] + "." },
	}})
	return config.Plugin{Name: "docs", Type: "http", URL: srv.URL}
}

// A task naming /mcp__docs__summarize gets the prompt's text as its prompt
// and nothing else: the posture stays as the request set it.
func TestSubmitMCPPromptCommand(t *testing.T) {
	repo := commandRepo(t, map[string]string{".reasonix/commands/review.md": "Review."})
	set := config.Default()
	set.Plugins = []config.Plugin{promptPlugin(t)}
	svc := commandService(t, repo, set)
	task, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:t",
		Command: "/mcp__docs__summarize", Args: []string{"pkg/foo"}, Workspace: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Summarize the package pkg/foo."; task.Prompt != want {
		t.Fatalf("prompt = %q, want %q", task.Prompt, want)
	}
	if task.Posture != "ask" {
		t.Fatalf("posture = %q", task.Posture)
	}

	_, _, err = svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:t",
		Command: "mcp__docs__sumarize", Workspace: "w"})
	var re *runner.Error
	if !errors.As(err, &re) || !errors.Is(re.Kind, runner.ErrInvalid) || !strings.Contains(re.Message, "did you mean /mcp__docs__summarize") {
		t.Fatalf("err = %v, want an invalid request suggesting the prompt", err)
	}
	if page, _ := svc.Tasks(context.Background(), store.TaskFilter{Limit: 10}); len(page.Tasks) != 1 {
		t.Fatalf("tasks = %d, want only the first", len(page.Tasks))
	}

	cs, err := svc.Commands(context.Background(), "w", true)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := cs.Lookup("mcp__docs__summarize")
	if !ok || c.Scope != recipe.ScopeMCP || c.ArgumentHint != "<path>" || c.Description != "Summarize a package" {
		t.Fatalf("commands = %v, prompt = %+v", cs.Names(), c)
	}
	if _, ok := cs.Lookup("review"); !ok {
		t.Fatalf("the file command is missing: %v", cs.Names())
	}
}

// Without [[plugins]] an mcp__ name is an unknown command like any other.
func TestSubmitMCPPromptWithoutPlugins(t *testing.T) {
	repo := commandRepo(t, map[string]string{".reasonix/commands/review.md": "Review."})
	svc := commandService(t, repo, nil)
	_, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:t",
		Command: "mcp__docs__summarize", Workspace: "w"})
	if err == nil || !strings.Contains(err.Error(), "unknown command /mcp__docs__summarize") {
		t.Fatalf("err = %v", err)
	}
}

// A schedule can name an MCP prompt too.
func TestScheduleNamesAnMCPPrompt(t *testing.T) {
	repo := commandRepo(t, map[string]string{".reasonix/commands/review.md": "Review."})
	set := config.Default()
	set.Plugins = []config.Plugin{promptPlugin(t)}
	set.Schedules = []config.Schedule{{Name: "nightly", Cron: "@every 1h", Command: "mcp__docs__summarize", Args: []string{"./cmd"},
		Workspace: "w", Posture: "ask", Overlap: config.OverlapSkip, CatchUp: config.CatchUpLatest, MaxFailures: 3}}
	svc := commandService(t, repo, set)
	task, err := svc.RunSchedule(context.Background(), runner.Principal{ID: "token:root", Role: store.RoleAdmin}, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if task.Prompt != "Summarize the package ./cmd." {
		t.Fatalf("prompt = %q", task.Prompt)
	}
}

// An ordinary command never asks the plugins for prompts (nor does its
// task, whose session only lists tools); an mcp__ name does.
func TestOnlyMCPNamesListThePrompts(t *testing.T) {
	target, err := url.Parse(promptPlugin(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	var lists atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // streamable HTTP answers may be event streams
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bytes.Contains(body, []byte(`"prompts/list"`)) {
			lists.Add(1)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(counting.Close)
	repo := commandRepo(t, map[string]string{".reasonix/commands/review.md": "Review."})
	set := config.Default()
	set.Plugins = []config.Plugin{{Name: "docs", Type: "http", URL: counting.URL}}
	svc := commandService(t, repo, set)
	task, _, err := svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:t",
		Command: "review", Workspace: "w"})
	if err != nil {
		t.Fatal(err)
	}
	runnertest.WaitState(t, svc, task.ID, 20*time.Second, store.StateSucceeded, store.StateFailed, store.StateBlocked)
	if n := lists.Load(); n != 0 {
		t.Fatalf("a file command listed the plugin's prompts %d times", n)
	}
	task, _, err = svc.Submit(context.Background(), runner.TaskRequest{Source: store.SourceAPI, Requester: "api:t",
		Command: "mcp__docs__summarize", Args: []string{"x"}, Workspace: "w"})
	if err != nil || task.Prompt != "Summarize the package x." {
		t.Fatalf("task = %+v, err = %v", task, err)
	}
	if lists.Load() == 0 {
		t.Fatal("the prompts were never listed")
	}
}
