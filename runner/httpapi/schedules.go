package httpapi

import (
	"context"
	"net/http"
	"time"

	"reasonix/policy"
	"reasonix/runner"
)

// scheduleView is a schedule as the API shows it. Times are omitted when
// they have no value (no next run while paused, no last run yet).
type scheduleView struct {
	Name          string         `json:"name"`
	Cron          string         `json:"cron"`
	Timezone      string         `json:"timezone"`
	Enabled       bool           `json:"enabled"`
	Paused        bool           `json:"paused"`
	PausedReason  string         `json:"paused_reason,omitempty"`
	NextRun       *time.Time     `json:"next_run,omitempty"`
	LastRun       *time.Time     `json:"last_run,omitempty"`
	LastTaskID    string         `json:"last_task_id,omitempty"`
	LastOutcome   string         `json:"last_outcome,omitempty"`
	Failures      int            `json:"failures"`
	MaxFailures   int            `json:"max_failures"`
	Skipped       int64          `json:"skipped"`
	LastSkippedAt *time.Time     `json:"last_skipped_at,omitempty"`
	Missed        int64          `json:"missed"`
	Overlap       string         `json:"overlap"`
	CatchUp       string         `json:"catch_up"`
	Posture       policy.Posture `json:"posture"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func viewSchedule(s runner.Schedule) scheduleView {
	return scheduleView{Name: s.Name, Cron: s.Cron, Timezone: s.Timezone, Enabled: s.Enabled, Paused: s.Paused,
		PausedReason: s.PausedReason, NextRun: optTime(s.Next), LastRun: optTime(s.LastRunAt),
		LastTaskID: s.LastTaskID, LastOutcome: s.LastOutcome, Failures: s.Failures, MaxFailures: s.MaxFailures,
		Skipped: s.Skipped, LastSkippedAt: optTime(s.LastSkippedAt), Missed: s.Missed,
		Overlap: s.Overlap, CatchUp: s.CatchUp, Posture: s.Posture}
}

// listSchedules answers GET /api/v1/schedules; any token may read.
func (a *API) listSchedules(w http.ResponseWriter, r *http.Request) {
	list, err := a.svc.Schedules(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]scheduleView, 0, len(list))
	for _, s := range list {
		out = append(out, viewSchedule(s))
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedules": out})
}

// runSchedule answers POST /api/v1/schedules/{name}/run with 202 and the
// task it started; an admin token is needed.
func (a *API) runSchedule(w http.ResponseWriter, r *http.Request) {
	t, err := a.svc.RunSchedule(r.Context(), principalOf(r), r.PathValue("name"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"task_id": t.ID, "task": viewTask(t)})
}

func (a *API) pauseSchedule(w http.ResponseWriter, r *http.Request) {
	a.changeSchedule(w, r, a.svc.PauseSchedule)
}

func (a *API) resumeSchedule(w http.ResponseWriter, r *http.Request) {
	a.changeSchedule(w, r, a.svc.ResumeSchedule)
}

// changeSchedule answers pause and resume with the schedule as it is now;
// an admin token is needed. Both are idempotent.
func (a *API) changeSchedule(w http.ResponseWriter, r *http.Request,
	change func(ctx context.Context, by runner.Principal, name string) (runner.Schedule, error)) {
	s, err := change(r.Context(), principalOf(r), r.PathValue("name"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewSchedule(s))
}
