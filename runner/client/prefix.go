package client

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"reasonix/runner/apitype"
)

// idTail is the length of a task or approval id after its kind prefix
// ("t_", "a_"): 26 characters of a time-sortable id. A shorter argument is
// taken as a prefix.
const idTail = 26

// maxCandidates is how many matches an AmbiguousError lists.
const maxCandidates = 10

// AmbiguousError is a prefix that more than one id starts with. It lists
// the matches (the newest first, at most maxCandidates); More says there
// were others too.
type AmbiguousError struct {
	Kind       string // "task" or "approval"
	Prefix     string
	Candidates []string
	More       bool
}

func (e *AmbiguousError) Error() string {
	more := ""
	if e.More {
		more = ", …"
	}
	return fmt.Sprintf("%s id prefix %q is ambiguous: it matches %s%s", e.Kind, e.Prefix, strings.Join(e.Candidates, ", "), more)
}

// normalizeID lowercases a typed id (ids use lower-case Crockford base 32)
// and adds kind's "t_"/"a_" when it was left out, so "01M8S" means
// "t_01m8s". full says it already has an id's length.
func normalizeID(kind, s string) (id string, full bool) {
	id = strings.ToLower(strings.TrimSpace(s))
	if !strings.HasPrefix(id, kind) {
		id = kind + id
	}
	return id, len(id) >= len(kind)+idTail
}

// notFoundPrefix is the not_found answer for a prefix nothing starts with.
func notFoundPrefix(kind, prefix string) error {
	return &Error{Status: http.StatusNotFound, Code: apitype.CodeNotFound,
		Message: fmt.Sprintf("no %s id starts with %q", kind, prefix)}
}

// ResolveTask turns a unique prefix of a task id ("t_01m8s", or "01m8s")
// into the whole id, as gh takes a short commit. A whole id is returned as
// it is without a request. No match is an *Error matching ErrNotFound;
// several are an *AmbiguousError listing them. Only tasks the token may
// list are candidates.
//
// Task ids sort by creation time and the listing pages by id ("id <
// cursor"), so every id starting with the prefix lies just below the
// prefix padded with the highest id character: one page read from there
// holds the matches first.
func (c *Client) ResolveTask(ctx context.Context, prefix string) (string, error) {
	id, full := normalizeID("t_", prefix)
	if full || id == "t_" {
		return id, nil
	}
	page, err := c.Tasks(ctx, TaskFilter{Cursor: id + strings.Repeat("z", idTail+1), Limit: maxCandidates + 1})
	if err != nil {
		return "", err
	}
	var ids []string
	for _, t := range page.Tasks {
		if strings.HasPrefix(t.ID, id) {
			ids = append(ids, t.ID)
		}
	}
	return pick("task", prefix, id, ids)
}

// ResolveApproval is ResolveTask for approval ids ("a_01m8s"), searched
// among the pending approvals and the 1000 most recent, as Approval
// searches.
func (c *Client) ResolveApproval(ctx context.Context, prefix string) (string, error) {
	id, full := normalizeID("a_", prefix)
	if full || id == "a_" {
		return id, nil
	}
	seen := map[string]bool{}
	var ids []string
	for _, f := range []ApprovalFilter{{State: apitype.ApprovalPending, Limit: 1000}, {Limit: 1000}} {
		list, err := c.Approvals(ctx, f)
		if err != nil {
			return "", err
		}
		for _, a := range list {
			if strings.HasPrefix(a.ID, id) && !seen[a.ID] {
				seen[a.ID] = true
				ids = append(ids, a.ID)
			}
		}
	}
	return pick("approval", prefix, id, ids)
}

// pick is the one id of ids, or the error saying there is none or more.
// An id equal to what was typed (normalized as id) wins over longer ones.
func pick(kind, prefix, id string, ids []string) (string, error) {
	if slices.Contains(ids, id) {
		return id, nil
	}
	switch {
	case len(ids) == 0:
		return "", notFoundPrefix(kind, prefix)
	case len(ids) == 1:
		return ids[0], nil
	}
	e := &AmbiguousError{Kind: kind, Prefix: prefix, Candidates: ids}
	if len(ids) > maxCandidates {
		e.Candidates, e.More = ids[:maxCandidates], true
	}
	return "", e
}
