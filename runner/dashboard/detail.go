package dashboard

import (
	"net/http"
	"strconv"
	"unicode/utf8"
)

// A step's detail (a tool's output, a call's arguments) can be megabytes.
// The task page shows its first maxDetail bytes and links to the step's
// own page, which shows the whole of it maxDetail bytes at a time, so no
// page grows with the output.

// detailChunk returns page n (from 1) of s cut into pieces of at most
// maxDetail bytes, each ending on a character boundary, and how many
// pages there are (at least 1). An n past the last gives "".
func detailChunk(s string, n int) (chunk string, pages int) {
	for start := 0; ; {
		end := min(start+maxDetail, len(s))
		// Back off to a character's start; a run of stray continuation
		// bytes as long as a page is cut where it falls.
		for e := end; e > start && e < len(s); e-- {
			if utf8.RuneStart(s[e]) {
				end = e
				break
			}
		}
		pages++
		if pages == n {
			chunk = s[start:end]
		}
		if end >= len(s) {
			return chunk, pages
		}
		start = end
	}
}

// stepPage is GET /tasks/{id}/steps/{seq}?page=N: one step's detail, page
// N, with links to the neighbouring pages.
func (d *Dashboard) stepPage(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	t, err := d.svc.Task(r.Context(), id)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	seq, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil || seq < 1 {
		d.problem(w, r, s, http.StatusNotFound, "There is no such step.")
		return
	}
	evs, err := d.svc.Events(r.Context(), id, seq-1, 1)
	if err != nil {
		d.fail(w, r, s, err)
		return
	}
	if len(evs) == 0 || evs[0].Seq != seq {
		d.problem(w, r, s, http.StatusNotFound, "This task has no such step.")
		return
	}
	it := fullItemOf(evs[0])
	n := 1
	if q := r.URL.Query().Get("page"); q != "" {
		if n, err = strconv.Atoi(q); err != nil || n < 1 {
			d.problem(w, r, s, http.StatusNotFound, "There is no such page of this step.")
			return
		}
	}
	chunk, pages := detailChunk(it.Detail, n)
	if n > pages {
		d.problem(w, r, s, http.StatusNotFound, "There is no such page of this step.")
		return
	}
	d.render(w, r, http.StatusOK, "step", s, map[string]any{
		"Task": t, "Item": it, "Chunk": chunk, "Page": n, "Pages": pages})
}
