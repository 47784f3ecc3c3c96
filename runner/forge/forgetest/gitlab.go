package forgetest

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"reasonix/runner/forge"
)

// GitLab access levels for the roles a test sets.
var glLevel = map[forge.Permission]int{forge.PermNone: 0, forge.PermRead: 20, forge.PermWrite: 30, forge.PermAdmin: 40}

// gitLabRoutes serves the REST v4 subset package forge uses.
func (s *Server) gitLabRoutes(mux *http.ServeMux, p string) {
	mux.HandleFunc("GET "+p+"/user", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		id := s.userID(s.opts.User)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "username": s.opts.User, "name": s.opts.User, "state": "active"})
	})
	mux.HandleFunc("GET "+p+"/users", s.glUsers)
	// ServeMux matches the escaped path, so the "group%2Fapp" id is one
	// segment and PathValue gives it back decoded.
	proj := p + "/projects/{id}"
	mux.HandleFunc("GET "+proj, s.glProject(s.glGetProject))
	mux.HandleFunc("GET "+proj+"/merge_requests", s.glProject(s.glListMRs))
	mux.HandleFunc("GET "+proj+"/merge_requests/{iid}", s.glProject(s.glGetMR))
	mux.HandleFunc("POST "+proj+"/merge_requests", s.glProject(s.glWrite(s.glCreateMR)))
	mux.HandleFunc("POST "+proj+"/merge_requests/{iid}/notes", s.glProject(s.glNote(false)))
	mux.HandleFunc("POST "+proj+"/issues/{iid}/notes", s.glProject(s.glNote(true)))
	mux.HandleFunc("GET "+proj+"/merge_requests/{iid}/notes", s.glProject(s.listComments(false)))
	mux.HandleFunc("GET "+proj+"/issues/{iid}/notes", s.glProject(s.listComments(true)))
	mux.HandleFunc("GET "+proj+"/pipelines", s.glProject(s.glPipelines))
	mux.HandleFunc("GET "+proj+"/pipelines/{pid}/jobs", s.glProject(s.glJobs))
	mux.HandleFunc("GET "+proj+"/jobs/{jid}/trace", s.glProject(s.glTrace))
	mux.HandleFunc("GET "+proj+"/members/all/{uid}", s.glProject(s.glMember))
}

func (s *Server) glProject(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.PathValue("id"), s.opts.Project) {
			s.errorJSON(w, http.StatusNotFound, "404 Project Not Found")
			return
		}
		h(w, r)
	}
}

func (s *Server) glWrite(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		p := s.perms[s.opts.User]
		s.mu.Unlock()
		if p < forge.PermWrite {
			s.errorJSON(w, http.StatusForbidden, "403 Forbidden")
			return
		}
		h(w, r)
	}
}

func (s *Server) glGetProject(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p := s.perms[s.opts.User]
	s.mu.Unlock()
	var access any
	if p > forge.PermNone {
		access = map[string]any{"access_level": glLevel[p], "notification_level": 3}
	}
	name := s.opts.Project[strings.LastIndex(s.opts.Project, "/")+1:]
	writeJSON(w, http.StatusOK, map[string]any{
		"id": 1, "name": name, "path": name, "path_with_namespace": s.opts.Project,
		"default_branch": "main", "web_url": s.webURL(""), "visibility": "private",
		"permissions": map[string]any{"project_access": access, "group_access": nil},
	})
}

func (s *Server) glMR(p *PullRequest) map[string]any {
	state := "opened"
	switch p.State {
	case forge.PRClosed:
		state = "closed"
	case forge.PRMerged:
		state = "merged"
	}
	return map[string]any{
		"id": 100000 + p.Number, "iid": p.Number, "project_id": 1, "title": p.Title, "description": p.Body,
		"state": state, "draft": p.Draft, "work_in_progress": p.Draft,
		"source_branch": p.Head, "target_branch": p.Base, "sha": s.liveSHA(p),
		"labels": append([]string{}, p.Labels...), "author": map[string]any{"username": s.opts.User},
		"web_url": s.webURL("/-/merge_requests/" + strconv.Itoa(p.Number)),
	}
}

// glGetMR answers for one merge request with its merge status, which
// GitLab computes in the background ("checking" meanwhile).
func (s *Server) glGetMR(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("iid"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 1 || n > len(s.prs) {
		s.errorJSON(w, http.StatusNotFound, "404 Not found")
		return
	}
	p := s.prs[n-1]
	out := s.glMR(p)
	switch s.mergeable(p) {
	case forge.MergeClean:
		out["merge_status"], out["detailed_merge_status"], out["has_conflicts"] = "can_be_merged", "mergeable", false
	case forge.MergeConflict:
		out["merge_status"], out["detailed_merge_status"], out["has_conflicts"] = "cannot_be_merged", "conflict", true
	default:
		out["merge_status"], out["detailed_merge_status"], out["has_conflicts"] = "checking", "checking", false
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) glListMRs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	src, state := q.Get("source_branch"), q.Get("state")
	s.mu.Lock()
	var out []map[string]any
	for _, p := range slices.Backward(s.prs) { // newest first
		st := s.glMR(p)["state"]
		if (src == "" || p.Head == src) && (state == "" || state == "all" || state == st) {
			out = append(out, s.glMR(p))
		}
	}
	s.mu.Unlock()
	page(s, w, r, out, nil)
}

func (s *Server) glCreateMR(w http.ResponseWriter, r *http.Request) {
	var in struct {
		SourceBranch string `json:"source_branch"`
		TargetBranch string `json:"target_branch"`
		Title        string `json:"title"`
		Description  string `json:"description"`
		Labels       string `json:"labels"`
		Draft        bool   `json:"draft"`
	}
	if err := readJSON(r, &in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid JSON"})
		return
	}
	for field, v := range map[string]string{"source_branch": in.SourceBranch, "target_branch": in.TargetBranch, "title": in.Title} {
		if v == "" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": field + " is missing"})
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prs {
		if p.Head == in.SourceBranch && p.State == forge.PROpen {
			writeJSON(w, http.StatusConflict, map[string]any{"message": []string{
				"Another open merge request already exists for this source branch: !" + strconv.Itoa(p.Number)}})
			return
		}
	}
	var labels []string
	for l := range strings.SplitSeq(in.Labels, ",") {
		if l = strings.TrimSpace(l); l != "" {
			labels = append(labels, l)
		}
	}
	sha, ok := s.headSHA(in.SourceBranch)
	if !ok {
		// GitLab refuses an unknown source branch as a validation error
		// of the merge request; the status here is an approximation.
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": []string{
			"Source branch \"" + in.SourceBranch + "\" does not exist"}})
		return
	}
	draft := in.Draft || strings.HasPrefix(strings.ToLower(in.Title), "draft:")
	p := s.addPR(PullRequest{Title: in.Title, Body: in.Description, Head: in.SourceBranch, Base: in.TargetBranch,
		SHA: sha, Draft: draft, Labels: labels})
	writeJSON(w, http.StatusCreated, s.glMR(p))
}

func (s *Server) glNote(issue bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Body string `json:"body"`
		}
		if err := readJSON(r, &in); err != nil || in.Body == "" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "body is missing"})
			return
		}
		n, err := strconv.Atoi(r.PathValue("iid"))
		s.mu.Lock()
		defer s.mu.Unlock()
		// Issues are not modelled beyond their number; merge requests must exist.
		if err != nil || n < 1 || !issue && n > len(s.prs) {
			s.errorJSON(w, http.StatusNotFound, "404 Not found")
			return
		}
		s.comments = append(s.comments, Comment{On: forge.Item{Number: n, Issue: issue}, Body: in.Body, Author: s.opts.User})
		typ := "MergeRequest"
		if issue {
			typ = "Issue"
		}
		writeJSON(w, http.StatusCreated, map[string]any{"id": len(s.comments), "body": in.Body,
			"author": map[string]any{"username": s.opts.User}, "noteable_type": typ, "noteable_iid": n})
	}
}

func glJobStatus(c run) string {
	switch c.State {
	case forge.CISuccess:
		return "success"
	case forge.CIFailure:
		return "failed"
	}
	return "running"
}

func glPipelineStatus(rs []run, pipeline int64) string {
	status := "success"
	for _, c := range rs {
		if c.Pipeline != pipeline {
			continue
		}
		switch glJobStatus(c) {
		case "running":
			return "running"
		case "failed":
			if !c.AllowFailure {
				status = "failed"
			}
		}
	}
	return status
}

func (s *Server) glPipelines(w http.ResponseWriter, r *http.Request) {
	sha := r.URL.Query().Get("sha")
	s.mu.Lock()
	var out []map[string]any
	for commit, rs := range s.runs {
		if sha != "" && sha != commit {
			continue
		}
		seen := map[int64]bool{}
		for _, c := range rs {
			if seen[c.Pipeline] {
				continue
			}
			seen[c.Pipeline] = true
			source := "push"
			if strings.HasPrefix(c.Ref, "refs/merge-requests/") {
				source = "merge_request_event"
			}
			out = append(out, map[string]any{"id": c.Pipeline, "iid": c.Pipeline, "project_id": 1,
				"sha": commit, "ref": c.Ref, "status": glPipelineStatus(rs, c.Pipeline), "source": source,
				"web_url": s.webURL("/-/pipelines/" + strconv.FormatInt(c.Pipeline, 10))})
		}
	}
	s.mu.Unlock()
	// Newest first, as the client asks (order_by=id, sort=desc).
	slices.SortFunc(out, func(a, b map[string]any) int { return cmp.Compare(b["id"].(int64), a["id"].(int64)) })
	page(s, w, r, out, nil)
}

func (s *Server) glJobs(w http.ResponseWriter, r *http.Request) {
	pid, _ := strconv.ParseInt(r.PathValue("pid"), 10, 64)
	s.mu.Lock()
	var out []map[string]any
	found := false
	for commit, rs := range s.runs {
		for _, c := range rs {
			if c.Pipeline != pid {
				continue
			}
			found = true
			reason := any(nil)
			if c.State == forge.CIFailure {
				reason = "script_failure"
			}
			out = append(out, map[string]any{"id": c.ID, "name": c.Name, "stage": c.Stage,
				"status": glJobStatus(c), "allow_failure": c.AllowFailure, "failure_reason": reason,
				"web_url":  s.webURL("/-/jobs/" + strconv.FormatInt(c.ID, 10)),
				"commit":   map[string]any{"id": commit},
				"pipeline": map[string]any{"id": pid, "sha": commit, "ref": c.Ref, "status": glPipelineStatus(rs, pid)}})
		}
	}
	s.mu.Unlock()
	if !found {
		s.errorJSON(w, http.StatusNotFound, "404 Not found")
		return
	}
	page(s, w, r, out, nil)
}

func (s *Server) glTrace(w http.ResponseWriter, r *http.Request) {
	jid, _ := strconv.ParseInt(r.PathValue("jid"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range s.runs {
		for _, c := range rs {
			if c.ID == jid {
				w.Header().Set("Content-Type", "text/plain")
				_, _ = w.Write([]byte(c.Log))
				return
			}
		}
	}
	s.errorJSON(w, http.StatusNotFound, "404 Not found")
}

func (s *Server) glUsers(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("username")
	s.mu.Lock()
	out := []map[string]any{}
	for u, id := range s.userIDs {
		if strings.EqualFold(u, name) {
			out = append(out, map[string]any{"id": id, "username": u, "name": u, "state": "active"})
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) glMember(w http.ResponseWriter, r *http.Request) {
	uid, _ := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for u, id := range s.userIDs {
		if id == uid && s.perms[u] > forge.PermNone {
			writeJSON(w, http.StatusOK, map[string]any{"id": id, "username": u, "state": "active",
				"access_level": glLevel[s.perms[u]]})
			return
		}
	}
	s.errorJSON(w, http.StatusNotFound, "404 Not found")
}
