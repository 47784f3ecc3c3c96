package forgetest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"reasonix/runner/forge"
)

// gitHubRoutes serves the REST v3 subset package forge uses.
func (s *Server) gitHubRoutes(mux *http.ServeMux, p string) {
	mux.HandleFunc("GET "+p+"/user", func(w http.ResponseWriter, r *http.Request) {
		if s.opts.App {
			s.errorJSON(w, http.StatusForbidden, "Resource not accessible by integration")
			return
		}
		s.mu.Lock()
		id := s.userID(s.opts.User)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"login": s.opts.User, "id": id, "type": "User"})
	})
	repo := p + "/repos/{owner}/{repo}"
	mux.HandleFunc("GET "+repo, s.ghProject(s.ghRepo))
	mux.HandleFunc("GET "+repo+"/pulls", s.ghProject(s.ghListPulls))
	mux.HandleFunc("GET "+repo+"/pulls/{number}", s.ghProject(s.ghGetPull))
	mux.HandleFunc("POST "+repo+"/pulls", s.ghProject(s.ghWrite(s.ghCreatePull)))
	mux.HandleFunc("POST "+repo+"/issues/{number}/labels", s.ghProject(s.ghWrite(s.ghAddLabels)))
	mux.HandleFunc("POST "+repo+"/issues/{number}/comments", s.ghProject(s.ghComment))
	mux.HandleFunc("GET "+repo+"/issues/{number}/comments", s.ghProject(s.listComments(false)))
	mux.HandleFunc("GET "+repo+"/commits/{sha}/check-runs", s.ghProject(s.ghCheckRuns))
	mux.HandleFunc("GET "+repo+"/commits/{sha}/status", s.ghProject(s.ghStatus))
	mux.HandleFunc("GET "+repo+"/check-runs/{id}", s.ghProject(s.ghCheckRun))
	mux.HandleFunc("GET "+repo+"/collaborators/{user}/permission", s.ghProject(s.ghPermission))
}

// ghProject answers 404 for any project but the server's, as GitHub does
// for a repository the token cannot see.
func (s *Server) ghProject(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.PathValue("owner")+"/"+r.PathValue("repo"), s.opts.Project) {
			s.errorJSON(w, http.StatusNotFound, "Not Found")
			return
		}
		h(w, r)
	}
}

// ghWrite refuses writes when the token's user cannot push.
func (s *Server) ghWrite(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		p := s.perms[s.opts.User]
		s.mu.Unlock()
		if p < forge.PermWrite {
			s.errorJSON(w, http.StatusForbidden, "Resource not accessible by personal access token")
			return
		}
		h(w, r)
	}
}

func (s *Server) ghRepo(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p := s.perms[s.opts.User]
	s.mu.Unlock()
	owner, _, _ := strings.Cut(s.opts.Project, "/")
	repo := map[string]any{
		"id": 1, "name": s.opts.Project[len(owner)+1:], "full_name": s.opts.Project,
		"owner": map[string]any{"login": owner}, "private": true, "default_branch": "main",
		"html_url": s.webURL(""),
	}
	if !s.opts.App {
		repo["permissions"] = map[string]bool{"admin": p >= forge.PermAdmin, "maintain": p >= forge.PermAdmin,
			"push": p >= forge.PermWrite, "triage": p >= forge.PermRead, "pull": p >= forge.PermRead}
	}
	writeJSON(w, http.StatusOK, repo)
}

func (s *Server) ghPull(p *PullRequest) map[string]any {
	owner, _, _ := strings.Cut(s.opts.Project, "/")
	state := "open"
	var merged any
	switch p.State {
	case forge.PRClosed:
		state = "closed"
	case forge.PRMerged:
		state = "closed"
		merged = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	labels := []map[string]any{}
	for _, l := range p.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	return map[string]any{
		"id": 100000 + p.Number, "number": p.Number, "state": state, "title": p.Title, "body": p.Body,
		"draft": p.Draft, "merged_at": merged, "labels": labels,
		"html_url": s.webURL("/pull/" + strconv.Itoa(p.Number)),
		"head":     map[string]any{"ref": p.Head, "sha": s.liveSHA(p), "label": owner + ":" + p.Head},
		"base":     map[string]any{"ref": p.Base},
		"user":     map[string]any{"login": s.opts.User},
	}
}

// ghGetPull answers for one pull request, with the mergeability only
// this answer carries: mergeable null while GitHub computes it.
func (s *Server) ghGetPull(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("number"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 1 || n > len(s.prs) {
		s.errorJSON(w, http.StatusNotFound, "Not Found")
		return
	}
	p := s.prs[n-1]
	out := s.ghPull(p)
	switch s.mergeable(p) {
	case forge.MergeClean:
		out["mergeable"], out["mergeable_state"] = true, "clean"
	case forge.MergeConflict:
		out["mergeable"], out["mergeable_state"] = false, "dirty"
	default:
		out["mergeable"], out["mergeable_state"] = nil, "unknown"
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) ghListPulls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	head := q.Get("head")
	if owner, branch, ok := strings.Cut(head, ":"); ok {
		if projOwner, _, _ := strings.Cut(s.opts.Project, "/"); !strings.EqualFold(owner, projOwner) {
			page(s, w, r, []map[string]any{}, nil)
			return
		}
		head = branch
	}
	state := q.Get("state")
	s.mu.Lock()
	var out []map[string]any
	for _, p := range slices.Backward(s.prs) { // newest first
		open := p.State == forge.PROpen
		if (head == "" || p.Head == head) && (state == "all" || (state == "closed") != open) {
			out = append(out, s.ghPull(p))
		}
	}
	s.mu.Unlock()
	page(s, w, r, out, nil)
}

func (s *Server) ghCreatePull(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title, Body, Head, Base string
		Draft                   bool
	}
	if err := readJSON(r, &in); err != nil {
		s.errorJSON(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	if _, branch, ok := strings.Cut(in.Head, ":"); ok {
		in.Head = branch
	}
	if in.Title == "" || in.Head == "" || in.Base == "" {
		s.ghInvalid(w, "missing_field", "title, head and base are required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prs {
		if p.Head == in.Head && p.State == forge.PROpen {
			owner, _, _ := strings.Cut(s.opts.Project, "/")
			s.ghInvalid(w, "custom", "A pull request already exists for "+owner+":"+in.Head+".")
			return
		}
	}
	sha, ok := s.headSHA(in.Head)
	if !ok {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
			"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest",
			"errors": []map[string]any{{"resource": "PullRequest", "field": "head", "code": "invalid"}},
		})
		return
	}
	p := s.addPR(PullRequest{Title: in.Title, Body: in.Body, Head: in.Head, Base: in.Base, SHA: sha, Draft: in.Draft})
	writeJSON(w, http.StatusCreated, s.ghPull(p))
}

func (s *Server) ghInvalid(w http.ResponseWriter, code, message string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest",
		"errors": []map[string]any{{"resource": "PullRequest", "code": code, "message": message}},
	})
}

func (s *Server) ghAddLabels(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Labels []string `json:"labels"`
	}
	if err := readJSON(r, &in); err != nil {
		s.errorJSON(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	n, _ := strconv.Atoi(r.PathValue("number"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 1 || n > len(s.prs) {
		s.errorJSON(w, http.StatusNotFound, "Not Found")
		return
	}
	p := s.prs[n-1]
	out := []map[string]any{}
	for _, l := range in.Labels {
		if !slices.Contains(p.Labels, l) {
			p.Labels = append(p.Labels, l)
		}
	}
	for _, l := range p.Labels {
		out = append(out, map[string]any{"name": l})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) ghComment(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Body string `json:"body"`
	}
	if err := readJSON(r, &in); err != nil || in.Body == "" {
		s.ghInvalid(w, "missing_field", "body is required")
		return
	}
	n, err := strconv.Atoi(r.PathValue("number"))
	if err != nil || n < 1 {
		s.errorJSON(w, http.StatusNotFound, "Not Found")
		return
	}
	s.mu.Lock()
	// GitHub numbers issues and pull requests in one space; here every
	// number past the pull requests stands for an issue.
	on := forge.Item{Number: n, Issue: n > len(s.prs)}
	s.comments = append(s.comments, Comment{On: on, Body: in.Body, Author: s.opts.User})
	id := len(s.comments)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"id": id, "body": in.Body,
		"user": map[string]any{"login": s.opts.User}, "html_url": s.webURL("/issues/" + strconv.Itoa(n))})
}

func (s *Server) ghCheckRunJSON(c run, sha string) map[string]any {
	status, conclusion := "completed", any(nil)
	switch c.State {
	case forge.CISuccess:
		conclusion = "success"
	case forge.CIFailure:
		conclusion = "failure"
	default:
		status = "in_progress"
	}
	return map[string]any{
		"id": c.ID, "head_sha": sha, "name": c.Name, "status": status, "conclusion": conclusion,
		"html_url":    s.webURL("/runs/" + strconv.FormatInt(c.ID, 10)),
		"details_url": s.webURL("/actions/runs/" + strconv.FormatInt(c.ID, 10)),
		"output":      map[string]any{"title": c.Summary, "summary": c.Summary, "text": c.Log},
	}
}

func (s *Server) ghCheckRuns(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("sha")
	s.mu.Lock()
	var out []map[string]any
	for _, c := range s.runs[sha] {
		if !c.Status {
			out = append(out, s.ghCheckRunJSON(c, sha))
		}
	}
	s.mu.Unlock()
	total := len(out)
	page(s, w, r, out, func(pg []map[string]any) any {
		return map[string]any{"total_count": total, "check_runs": pg}
	})
}

func (s *Server) ghStatus(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("sha")
	s.mu.Lock()
	var out []map[string]any
	failed, pending := false, false
	for _, c := range s.runs[sha] {
		if !c.Status {
			continue
		}
		state := "pending"
		switch c.State {
		case forge.CISuccess:
			state = "success"
		case forge.CIFailure:
			state = "failure"
		}
		failed = failed || state == "failure"
		pending = pending || state == "pending"
		out = append(out, map[string]any{"id": c.ID, "context": c.Name, "state": state,
			"description": c.Summary, "target_url": s.webURL("/status/" + strconv.FormatInt(c.ID, 10))})
	}
	s.mu.Unlock()
	// GitHub answers pending for a commit without statuses too.
	combined := "success"
	switch {
	case failed:
		combined = "failure"
	case pending || len(out) == 0:
		combined = "pending"
	}
	total := len(out)
	page(s, w, r, out, func(pg []map[string]any) any {
		return map[string]any{"state": combined, "sha": sha, "total_count": total, "statuses": pg}
	})
}

func (s *Server) ghCheckRun(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for sha, rs := range s.runs {
		for _, c := range rs {
			if c.ID == id && !c.Status {
				writeJSON(w, http.StatusOK, s.ghCheckRunJSON(c, sha))
				return
			}
		}
	}
	s.errorJSON(w, http.StatusNotFound, "Not Found")
}

func (s *Server) ghPermission(w http.ResponseWriter, r *http.Request) {
	user := r.PathValue("user")
	s.mu.Lock()
	_, known := s.userIDs[user]
	p := s.perms[user]
	s.mu.Unlock()
	if !known {
		s.errorJSON(w, http.StatusNotFound, "Not Found")
		return
	}
	name := map[forge.Permission]string{forge.PermNone: "none", forge.PermRead: "read",
		forge.PermWrite: "write", forge.PermAdmin: "admin"}[p]
	writeJSON(w, http.StatusOK, map[string]any{"permission": name, "role_name": name,
		"user": map[string]any{"login": user}})
}
