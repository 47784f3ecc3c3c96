package goals

import (
	"errors"
	"testing"
)

// FuzzParseFleet: arbitrary bytes never panic, every refusal wraps
// ErrPreflight, and every accepted graph has unique ids, known dependencies
// and an order in which each item comes after all its dependencies.
func FuzzParseFleet(f *testing.F) {
	for _, s := range []string{
		`{"items":[{"prompt":"a"},{"prompt":"b","depends_on":["1"]}]}`,
		`{"items":[{"id":"a","prompt":"x","depends_on":["b"]},{"id":"b","prompt":"y","depends_on":["a"]}]}`,
		`{"items":[{"id":"a","prompt":"x","depends_on":["a"]},{"id":"b","prompt":"y"}]}`,
		`{"items":[{"id":"r","prompt":"x"},{"id":"b","prompt":"y","depends_on":["r"],"write_paths":["api"]},{"id":"f","prompt":"z","depends_on":["r"]},{"id":"i","prompt":"w","depends_on":["b","f"]}],"fail_fast":true}`,
		`{"items":[{"id":"a","adopt_ref":"sa-1"},{"id":"b","prompt":"y","depends_on":["a"]}]}`,
		`{"items":[{"id":"a","continue_from":"sa-1","prompt":"go on"},{"id":"b","fork_from":"sa-2","prompt":"y","write_paths":["x"]}]}`,
		`{"items":[{"id":"a","continue_from":"sa-1","fork_from":"sa-1","prompt":"x"},{"id":"b","prompt":"y"}]}`,
		`{"items":[{"id":"a","continue_from":"sa-1","profile":"p","prompt":"x"},{"id":"b","adopt_ref":"sa-3","fork_from":"sa-2"}]}`,
		`{"items":[]}`, `null`, `[]`, `{"items":[{"prompt":"x","write_paths":["../x"]},{"prompt":"y"}]}`, `{} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		g, err := ParseFleet(raw)
		if err != nil {
			if !errors.Is(err, ErrPreflight) {
				t.Fatalf("error does not wrap ErrPreflight: %v", err)
			}
			return
		}
		n := len(g.Items)
		if n < MinFleetItems || n > MaxFleetItems || len(g.order) != n {
			t.Fatalf("accepted %d items with an order of %d", n, len(g.order))
		}
		ids := map[string]bool{}
		for _, it := range g.Items {
			if it.ID == "" || ids[it.ID] {
				t.Fatalf("empty or duplicate id %q", it.ID)
			}
			ids[it.ID] = true
			resumes := it.ContinueFrom != "" || it.ForkFrom != ""
			if it.ContinueFrom != "" && it.ForkFrom != "" || it.AdoptRef != "" && resumes ||
				it.ContinueFrom != "" && (it.Profile != "" || it.Model != "" || len(it.WritePaths) > 0) || it.ForkFrom != "" && it.Profile != "" {
				t.Fatalf("item %q mixes adopt_ref, continue_from and fork_from with fields they exclude", it.ID)
			}
		}
		pos := make([]int, n)
		for k, i := range g.order {
			pos[i] = k
		}
		for i := range g.Items {
			for _, d := range g.Deps(i) {
				if d == i || pos[d] >= pos[i] {
					t.Fatalf("item %q comes before its dependency %q: the graph has a cycle", g.Items[i].ID, g.Items[d].ID)
				}
			}
		}
	})
}
