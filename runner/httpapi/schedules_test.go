package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"reasonix/agent/agenttest"
	"reasonix/config"
	"reasonix/runner/httpapi"
	"reasonix/runner/runnertest"
	"reasonix/runner/store"
	"reasonix/runner/store/storetest"
)

func newScheduleEnv(t *testing.T) *env {
	st := storetest.SQLite(t, store.Config{})
	set := config.Default()
	set.Schedules = []config.Schedule{{Name: "nightly", Cron: "0 3 * * *", Timezone: "Europe/Berlin", Prompt: "update deps",
		Overlap: config.OverlapSkip, CatchUp: config.CatchUpLatest, MaxFailures: 3}}
	svc := runnertest.Start(t, runnertest.Options{Provider: agenttest.NewScriptedProvider(agenttest.Turn{Text: "done"}), Store: st, Settings: set})
	if _, err := st.RegisterBootstrapToken(context.Background(), store.BootstrapName, token); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &env{t: t, svc: svc, st: st, srv: srv, secret: token}
}

type scheduleJSON struct {
	Name, Cron, Timezone string
	LastTaskID           string `json:"last_task_id"`
	LastOutcome          string `json:"last_outcome"`
	Paused               bool
	NextRun              *time.Time `json:"next_run"`
	LastRun              *time.Time `json:"last_run"`
}

func TestSchedulesAPI(t *testing.T) {
	e := newScheduleEnv(t)
	reader := e.as(e.newToken("reader", store.RoleSubmit, ""))
	approver := e.as(e.newToken("bob", store.RoleApprove, ""))

	var list struct{ Schedules []map[string]any }
	if res := reader.do("GET", "/api/v1/schedules", "", nil, &list); res.StatusCode != http.StatusOK || len(list.Schedules) != 1 {
		t.Fatalf("list: %d %+v", res.StatusCode, list)
	}
	s := list.Schedules[0]
	if s["name"] != "nightly" || s["timezone"] != "Europe/Berlin" || s["paused"] != false || s["next_run"] == nil || s["last_run"] != nil {
		t.Errorf("listed = %v", s)
	}

	for _, who := range []*env{reader, approver} {
		for _, action := range []string{"run", "pause", "resume"} {
			if code, c := who.status("POST", "/api/v1/schedules/nightly/"+action, ""); code != http.StatusForbidden || c != "forbidden" {
				t.Errorf("%s by a non-admin: %d %s, want 403", action, code, c)
			}
		}
	}
	if code, _ := e.status("POST", "/api/v1/schedules/weekly/run", ""); code != http.StatusNotFound {
		t.Errorf("run of an unknown schedule: %d, want 404", code)
	}

	var paused scheduleJSON
	if res := e.do("POST", "/api/v1/schedules/nightly/pause", "", nil, &paused); res.StatusCode != http.StatusOK || !paused.Paused || paused.NextRun != nil {
		t.Fatalf("pause: %d %+v", res.StatusCode, paused)
	}
	var run struct {
		TaskID string `json:"task_id"`
	}
	if res := e.do("POST", "/api/v1/schedules/nightly/run", "", nil, &run); res.StatusCode != http.StatusAccepted || run.TaskID == "" {
		t.Fatalf("run: %d %+v", res.StatusCode, run)
	}
	task := e.waitTask(run.TaskID, "succeeded", "failed")
	if task["requester"] != "schedule:nightly" || task["source"] != "cron" {
		t.Errorf("the run's task: %v", task)
	}
	var got scheduleJSON
	if res := e.do("POST", "/api/v1/schedules/nightly/resume", "", nil, &got); res.StatusCode != http.StatusOK ||
		got.Paused || got.NextRun == nil || got.LastTaskID != run.TaskID || got.LastRun == nil {
		t.Fatalf("resume: %d %+v", res.StatusCode, got)
	}
	// The run is in the task list like any other task.
	var tasks struct{ Tasks []map[string]any }
	e.do("GET", "/api/v1/tasks?source=cron", "", nil, &tasks)
	if len(tasks.Tasks) != 1 {
		t.Errorf("cron tasks listed: %d, want 1", len(tasks.Tasks))
	}
}
