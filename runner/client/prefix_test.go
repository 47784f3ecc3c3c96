package client_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"reasonix/runner/apitype"
	"reasonix/runner/client"
)

// TestResolveTask: each task's shortest unique prefix resolves to it (with
// or without "t_", in either case), one character less is ambiguous and
// lists every match, an unknown prefix is not found, and a whole id is
// returned as it is.
func TestResolveTask(t *testing.T) {
	s := start(t, options{})
	c := s.client("")
	ctx := t.Context()
	var ids []string
	for range 4 {
		sub, err := c.Submit(ctx, apitype.SubmitRequest{Prompt: "x"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sub.ID)
	}
	matches := func(prefix string) []string {
		var m []string
		for _, id := range ids {
			if strings.HasPrefix(id, prefix) {
				m = append(m, id)
			}
		}
		return m
	}
	for _, id := range ids {
		n := 3
		for len(matches(id[:n])) > 1 {
			n++
		}
		for _, prefix := range []string{id[:n], strings.ToUpper(id[2:n])} {
			if got, err := c.ResolveTask(ctx, prefix); err != nil || got != id {
				t.Fatalf("ResolveTask(%q) = %q, %v; want %s", prefix, got, err, id)
			}
		}
		short := id[:n-1]
		_, err := c.ResolveTask(ctx, short)
		var amb *client.AmbiguousError
		if !errors.As(err, &amb) || amb.Kind != "task" || amb.More {
			t.Fatalf("ResolveTask(%q) = %v, want ambiguous", short, err)
		}
		// Newest first is the ids' descending order (two made in one
		// millisecond are ordered by their random part).
		want := matches(short)
		slices.Sort(want)
		slices.Reverse(want)
		if !slices.Equal(amb.Candidates, want) {
			t.Fatalf("ResolveTask(%q) candidates %v, want %v", short, amb.Candidates, want)
		}
	}
	_, err := c.ResolveTask(ctx, "t_zzzz")
	wantCode(t, "ResolveTask(t_zzzz)", err, http.StatusNotFound, client.ErrNotFound)
	if !strings.Contains(err.Error(), `"t_zzzz"`) {
		t.Fatalf("not found error %q does not name the prefix", err)
	}
	if got, err := c.ResolveTask(ctx, ids[0]); err != nil || got != ids[0] {
		t.Fatalf("ResolveTask(whole id) = %q, %v", got, err)
	}
}
