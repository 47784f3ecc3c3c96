package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"reasonix/internal/ids"
	"reasonix/runner"
	"reasonix/runner/store"
)

//go:embed templates static
var assets embed.FS

// chrome is what every page's frame shows: who is signed in, the CSRF
// token its forms carry, which tab is current.
type chrome struct {
	Title     string
	Principal string
	Role      string
	CSRF      string
	Tab       string
	SignedIn  bool
	// Pending counts the approvals waiting for a decision, shown in the
	// navigation and the page's title.
	Pending int
	Data    any
}

var funcs = template.FuncMap{
	"rfc3339":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"utc":       func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"age":       age,
	"inzone":    inZone,
	"duration":  duration,
	"difflines": diffLines,
	"count":     func(n int) string { return compact(n) },
	"usd":       usd,
	"inc":       func(n int) int { return n + 1 },
	// pending is the navigation's count of approvals: "", "3" or "500+".
	"pending": func(n int) string {
		switch {
		case n <= 0:
			return ""
		case n > maxPendingCounted:
			return fmt.Sprintf("%d+", maxPendingCounted)
		}
		return fmt.Sprint(n)
	},
	"dec": func(n int) int { return n - 1 },
	// approvalArgs hands the approval part its approval, the CSRF token of
	// its form and where the decision returns to.
	"approvalArgs": func(a approvalView, csrf, back string) map[string]any {
		return map[string]any{"A": a, "CSRF": csrf, "Back": back}
	},
}

func (d *Dashboard) parseTemplates() error {
	d.pages = map[string]*template.Template{}
	for _, name := range []string{"login", "loginlink", "problem", "tasks", "task", "approvals", "schedules", "nodes", "webhooks", "step", "grants", "memories"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/parts.html", "templates/"+name+".html")
		if err != nil {
			return fmt.Errorf("dashboard: template %s: %w", name, err)
		}
		d.pages[name] = t
	}
	t, err := template.New("event").Funcs(funcs).ParseFS(assets, "templates/parts.html")
	if err != nil {
		return fmt.Errorf("dashboard: event template: %w", err)
	}
	d.eventTmpl = t
	return nil
}

// titles are the pages' titles; a page not listed is titled by its name.
var titles = map[string]string{"tasks": "Tasks", "task": "Task", "approvals": "Approvals", "schedules": "Schedules",
	"nodes": "Nodes", "webhooks": "Webhooks", "memories": "Memory", "grants": "Grants", "step": "Step", "login": "Sign in", "loginlink": "Sign in", "problem": "Problem"}

// maxPendingCounted bounds the pending approvals counted for the
// navigation; more show as "500+".
const maxPendingCounted = 500

// pendingCount is how many approvals wait for a decision (at most
// maxPendingCounted+1); 0 when the store cannot say just now, which the
// page shows as no count rather than failing.
func (d *Dashboard) pendingCount(ctx context.Context) int {
	list, err := d.svc.Approvals(ctx, runner.ApprovalFilter{State: store.ApprovalPending, Limit: maxPendingCounted + 1})
	if err != nil {
		d.log.Warn("dashboard: counting pending approvals", "err", err)
		return 0
	}
	return len(list)
}

// render writes page name with data inside the frame. The page is built in
// memory first, so a template failure is a clean 500, not half a page.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, name string, s *session, data any) {
	c := chrome{Title: cmp.Or(titles[name], name), Tab: name, Data: data}
	if s != nil {
		c.SignedIn, c.Principal, c.Role, c.CSRF = true, s.principal.ID, string(s.principal.Role), s.csrf
		c.Pending = d.pendingCount(r.Context())
	}
	var buf bytes.Buffer
	if err := d.pages[name].ExecuteTemplate(&buf, "layout", c); err != nil {
		ref := d.logRef(r, err)
		http.Error(w, ref, http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// problem shows a short message for a person, with the status.
func (d *Dashboard) problem(w http.ResponseWriter, r *http.Request, s *session, status int, msg string) {
	d.render(w, r, status, "problem", s, map[string]any{"Status": status, "StatusText": http.StatusText(status), "Message": msg})
}

// fail answers a service error the way the API does: a *runner.Error's
// message with its status; anything else a 500 whose detail is logged
// under a reference the person can quote.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	var re *runner.Error
	status := 0
	switch {
	case !errors.As(err, &re):
	case errors.Is(re.Kind, runner.ErrInvalid):
		status = http.StatusBadRequest
	case errors.Is(re.Kind, runner.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(re.Kind, runner.ErrExpired), errors.Is(re.Kind, runner.ErrConflict):
		status = http.StatusConflict
	case errors.Is(re.Kind, runner.ErrUnauthenticated):
		status = http.StatusUnauthorized
	case errors.Is(re.Kind, runner.ErrForbidden):
		status = http.StatusForbidden
	case errors.Is(re.Kind, runner.ErrUnavailable):
		status = http.StatusServiceUnavailable
	}
	if status != 0 {
		d.problem(w, r, s, status, re.Message)
		return
	}
	d.problem(w, r, s, http.StatusInternalServerError, d.logRef(r, err))
}

// logRef logs err under a fresh reference and returns the sentence a person
// sees instead of the detail.
func (d *Dashboard) logRef(r *http.Request, err error) string {
	ref := ids.Hex(4)
	d.log.Error("dashboard: request failed", slog.String("ref", ref), slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.Any("err", err))
	return "Something went wrong on the server; quote reference " + ref + " when reporting it."
}

// inZone is t in the IANA zone tz, its zone named: a schedule's times read
// in the schedule's own zone ("2026-03-02 03:00 CET"). An unknown or empty
// zone is UTC.
func inZone(t time.Time, tz string) string {
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "" {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}

func age(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration(time.Since(t))
}

// duration is a short, rounded length: 45s, 12m, 3h, 2d.
func duration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func compact(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// diffLine is one line of a preview, classed for colour when it is a diff.
type diffLine struct {
	Class string
	Text  string
}

func diffLines(s string) []diffLine {
	lines := strings.Split(s, "\n")
	out := make([]diffLine, len(lines))
	for i, l := range lines {
		c := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			c = "hdr"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		}
		out[i] = diffLine{Class: c, Text: l}
	}
	return out
}

func usd(v float64) string { return fmt.Sprintf("$%.4f", v) }
