package httpapi

import (
	"context"
	"net/http"

	"reasonix/runner"
	"reasonix/runner/apitype"
)

// listSchedules answers GET /api/v1/schedules; any token may read.
func (a *API) listSchedules(w http.ResponseWriter, r *http.Request) {
	list, err := a.svc.Schedules(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]apitype.Schedule, 0, len(list))
	for _, s := range list {
		out = append(out, viewSchedule(s))
	}
	writeJSON(w, http.StatusOK, apitype.ScheduleList{Schedules: out})
}

// runSchedule answers POST /api/v1/schedules/{name}/run with 202 and the
// task it started; an admin token is needed.
func (a *API) runSchedule(w http.ResponseWriter, r *http.Request) {
	t, err := a.svc.RunSchedule(r.Context(), principalOf(r), r.PathValue("name"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, apitype.ScheduleRun{TaskID: t.ID, Task: viewTask(t)})
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
