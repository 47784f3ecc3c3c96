package builtin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"reasonix/agent"
)

// testNotebook has a code cell with outputs, a markdown cell and ids, and
// fields this tool does not know, which must survive every edit.
const testNotebook = `{
 "cells": [
  {"cell_type": "code", "execution_count": 3, "id": "c1", "metadata": {"tags": ["x"]},
   "outputs": [{"name": "stdout", "output_type": "stream", "text": ["hi\n"]}], "source": ["print('hi')\n", "x = 1"]},
  {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": "# Title"},
  {"cell_type": "raw", "id": "r1", "metadata": {}, "source": []}
 ],
 "metadata": {"kernelspec": {"name": "python3"}, "custom": {"keep": true}},
 "nbformat": 4,
 "nbformat_minor": 5
}
`

func readNotebook(t *testing.T, p string) map[string]any {
	t.Helper()
	var nb map[string]any
	if err := json.Unmarshal([]byte(readString(t, p)), &nb); err != nil {
		t.Fatalf("the notebook is no longer JSON: %v", err)
	}
	return nb
}

func cellsOf(nb map[string]any) []map[string]any {
	var out []map[string]any
	for _, c := range nb["cells"].([]any) {
		out = append(out, c.(map[string]any))
	}
	return out
}

func TestNotebookEditCells(t *testing.T) {
	env, _ := testEnv(t)
	env.Observed = agent.NewObserved()
	writeTree(t, env.Workdir, map[string]string{"nb.ipynb": testNotebook})
	p := filepath.Join(env.Workdir, "nb.ipynb")
	ne := tool(t, env, "notebook_edit")

	// Read before write, like edit_file.
	wantErr(t, ne, `{"path":"nb.ipynb","cell_id":"c1","new_source":"y = 2"}`, "has not been read")
	mustCall(t, tool(t, env, "read_file"), `{"path":"nb.ipynb"}`)

	got := mustCall(t, ne, `{"path":"nb.ipynb","cell_id":"c1","new_source":"y = 2\nprint(y)\n"}`)
	if !strings.Contains(got, "replaced the source of code cell 0") {
		t.Fatalf("replace: %q", got)
	}
	nb := readNotebook(t, p)
	c0 := cellsOf(nb)[0]
	if src := c0["source"].([]any); len(src) != 2 || src[0] != "y = 2\n" || src[1] != "print(y)\n" {
		t.Errorf("source %v", c0["source"])
	}
	if len(c0["outputs"].([]any)) != 0 || c0["execution_count"] != nil || c0["metadata"].(map[string]any)["tags"] == nil {
		t.Errorf("replaced code cell: outputs %v, count %v, metadata %v", c0["outputs"], c0["execution_count"], c0["metadata"])
	}
	if nb["metadata"].(map[string]any)["custom"] == nil || nb["nbformat_minor"].(float64) != 5 {
		t.Errorf("notebook fields lost: %v", nb)
	}

	// Its own write counts as seen: the next edit needs no new read.
	got = mustCall(t, ne, `{"path":"nb.ipynb","edit_mode":"insert","cell_id":"m1","cell_type":"code","new_source":"z = 3"}`)
	if !strings.Contains(got, "inserted a code cell at index 2") || !strings.Contains(got, "4 cells") {
		t.Fatalf("insert: %q", got)
	}
	cells := cellsOf(readNotebook(t, p))
	if cells[2]["cell_type"] != "code" || cells[2]["id"] == "" || cells[2]["outputs"] == nil || cells[2]["id"] == cells[1]["id"] {
		t.Errorf("inserted cell %v", cells[2])
	}
	mustCall(t, ne, `{"path":"nb.ipynb","edit_mode":"insert","cell_index":0,"cell_type":"markdown","new_source":"intro"}`)
	got = mustCall(t, ne, `{"path":"nb.ipynb","edit_mode":"delete","cell_index":4}`)
	if !strings.Contains(got, "deleted raw cell 4") {
		t.Fatalf("delete: %q", got)
	}
	got = mustCall(t, ne, `{"path":"nb.ipynb","cell_index":1,"cell_type":"markdown","new_source":"now prose"}`)
	cells = cellsOf(readNotebook(t, p))
	if len(cells) != 4 || cells[0]["source"].([]any)[0] != "intro" || cells[1]["cell_type"] != "markdown" || cells[1]["outputs"] != nil {
		t.Errorf("after the edits (%s): %v", got, cells)
	}

	// An edit on disk since the tool's own write needs a new read.
	if err := os.WriteFile(p, []byte(testNotebook), 0o644); err != nil {
		t.Fatal(err)
	}
	wantErr(t, ne, `{"path":"nb.ipynb","cell_index":0,"new_source":"x"}`, "changed on disk")
}

func TestNotebookEditRefuses(t *testing.T) {
	env, _ := testEnv(t)
	writeTree(t, env.Workdir, map[string]string{"nb.ipynb": testNotebook, "bad.ipynb": `{"cells": "no", "nbformat": 4}`,
		"v3.ipynb": `{"worksheets": [], "nbformat": 3}`, "notjson.ipynb": "# just text\n"})
	ne := tool(t, env, "notebook_edit")
	for _, c := range []struct{ args, want string }{
		{`{"path":"nb.ipynb","cell_index":9,"new_source":"x"}`, "out of range"},
		{`{"path":"nb.ipynb","cell_id":"nope","new_source":"x"}`, `no cell has id "nope"`},
		{`{"path":"nb.ipynb","cell_id":"c1","cell_index":0,"new_source":"x"}`, "not both"},
		{`{"path":"nb.ipynb","new_source":"x"}`, "needs cell_id or cell_index"},
		{`{"path":"nb.ipynb","edit_mode":"insert","new_source":"x"}`, "needs new_source and cell_type"},
		{`{"path":"nb.ipynb","edit_mode":"delete","cell_index":0,"new_source":"x"}`, "neither"},
		{`{"path":"nb.ipynb","edit_mode":"move","cell_index":0}`, "edit_mode must be"},
		{`{"path":"nb.ipynb","cell_index":0,"new_source":"x","cell_type":"python"}`, "cell_type must be"},
		{`{"path":"bad.ipynb","cell_index":0,"new_source":"x"}`, "cells are not a list"},
		{`{"path":"v3.ipynb","cell_index":0,"new_source":"x"}`, "nbformat 4"},
		{`{"path":"notjson.ipynb","cell_index":0,"new_source":"x"}`, "not a JSON object"},
		{`{"path":"../x.ipynb","cell_index":0,"new_source":"x"}`, "notebook_edit"},
	} {
		wantErr(t, ne, c.args, c.want)
	}
	if readString(t, filepath.Join(env.Workdir, "nb.ipynb")) != testNotebook {
		t.Error("a refused edit changed the notebook")
	}
}

// FuzzNotebookEdit: whatever the file holds, parsing never panics, and a
// notebook that parses stays one after any edit: valid JSON that parses
// again, with the cell count the edit implies and the untouched cells'
// sources unchanged.
func FuzzNotebookEdit(f *testing.F) {
	for _, seed := range []string{
		testNotebook,
		`{"cells":[],"nbformat":4,"nbformat_minor":2,"metadata":{}}`,
		`{"cells":[{"cell_type":"code","source":"a\nb","metadata":{}}],"nbformat":4}`,
		`{"cells":[null],"nbformat":4}`,
		`{"cells":[{"cell_type":"code","source":[1,2]}],"nbformat":4}`,
		`{"cells":[{"cell_type":"evil","source":""}],"nbformat":4}`,
		`{"cells":[{"cell_type":"code"}],"nbformat":4}`,
		`{"cells":{},"nbformat":4}`,
		`{"cells":[],"nbformat":"4"}`,
		`{"cells":[],"nbformat":4,"cells":[{"cell_type":"raw","source":"dup key"}]}`,
		`{"cells":[{"cell_type":"markdown","source":"\u2028<script>\u0000","id":"\"quoted\""}],"nbformat":4,"nbformat_minor":5}`,
		`[1,2,3]`, `null`, ``, `{`, "\xff\xfe{}", `{"nbformat":4}`,
		`{"cells":[{"cell_type":"code","source":"x","outputs":[{"data":{"text/html":"<b>"}}]}],"nbformat":4,"metadata":{"a":{"b":[{"c":null}]}}}`,
	} {
		f.Add([]byte(seed), 0, "new\nsource", uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, at int, source string, mode uint8) {
		nb, err := parseNotebook(data)
		if err != nil {
			return
		}
		before := len(nb.cells)
		sources := make([]string, before)
		for i, c := range nb.cells {
			sources[i], _ = cellSource(c)
		}
		want := before
		switch {
		case mode%3 == 1:
			at = min(max(at, 0), before)
			nb.insert(at, source, "code")
			want++
		case before == 0:
			return
		case mode%3 == 2:
			at = min(max(at, 0), before-1)
			nb.remove(at)
			want--
		default:
			at = min(max(at, 0), before-1)
			nb.setSource(at, source, "markdown")
		}
		out, err := nb.marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := parseNotebook(out)
		if err != nil {
			t.Fatalf("the edited notebook does not parse: %v\n%s", err, out)
		}
		if len(again.cells) != want {
			t.Fatalf("%d cells, want %d", len(again.cells), want)
		}
		for i, c := range again.cells {
			got, _ := cellSource(c)
			j := i
			switch {
			case i == at && mode%3 != 2:
				if jsonText(source) != got {
					t.Fatalf("cell %d source %q, want %q", i, got, source)
				}
				continue
			case mode%3 == 1 && i > at, mode%3 == 2 && i >= at:
				j = i - 1
				if mode%3 == 2 {
					j = i + 1
				}
			}
			if jsonText(sources[j]) != got {
				t.Fatalf("untouched cell %d (was %d) changed: %q, was %q", i, j, got, sources[j])
			}
		}
	})
}

// jsonText is s as a JSON string gives it back (invalid UTF-8 replaced).
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}
