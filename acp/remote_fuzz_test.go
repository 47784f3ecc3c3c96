package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"reasonix/config"
	"reasonix/runner/apitype"
)

// FuzzTaskUpdates: whatever a service sends as an event, the translation
// never panics, and every update it yields is a JSON session/update of a
// kind an editor knows.
func FuzzTaskUpdates(f *testing.F) {
	for _, s := range []struct{ typ, payload string }{
		{"message", `{"role":"assistant","text":"hi"}`},
		{"message", `{"role":"user","text":"steer"}`},
		{"tool_started", `{"call_id":"c1","tool":"edit_file","args":"{\"path\":\"a.go\",\"old_string\":\"x\",\"new_string\":\"y\"}"}`},
		{"tool_started", `{"call_id":"c1","tool":"bash","args":"not json","subagent":"fleet/a"}`},
		{"tool_finished", `{"call_id":"c1","result":"ok","is_error":true}`},
		{"tool_refused", `{"call_id":"c1","tool":"bash","reason":"no","code":"declined"}`},
		{"plan_updated", `{"plan":[{"content":"a","status":"done","steps":[{"content":"b","status":"in_progress"}]}]}`},
		{"plan_updated", `{"plan":{"not":"a list"}}`},
		{"task_state", `{"state":"waiting_approval","reason":"x"}`},
		{"question", `{"question":"which one?"}`},
		{"approval_decided", `{"approval_id":"a_1","decision":"allow_once","approver":"token:bob"}`},
		{"final_report", `{"summary":"` + strings.Repeat("x", 20000) + `"}`},
		{"message", `null`}, {"message", `[]`}, {"message", `{"text":"\xff\xfe"}`}, {"tool_started", `{"call_id":""}`},
		{"", ``}, {"message", `{"text":1}`},
	} {
		f.Add(s.typ, []byte(s.payload))
	}
	known := map[string]bool{"agent_message_chunk": true, "user_message_chunk": true, "agent_thought_chunk": true,
		"tool_call": true, "tool_call_update": true, "plan": true}
	f.Fuzz(func(t *testing.T, typ string, payload []byte) {
		for _, u := range taskUpdates("/w", apitype.Event{Seq: 1, Type: typ, Payload: payload}) {
			b, err := json.Marshal(u)
			if err != nil {
				t.Fatalf("update of %s does not marshal: %v", typ, err)
			}
			var k struct {
				SessionUpdate string `json:"sessionUpdate"`
			}
			if json.Unmarshal(b, &k) != nil || !known[k.SessionUpdate] {
				t.Fatalf("update of %s is %s", typ, b)
			}
		}
	})
}

// FuzzGitRemoteURLs: reading a checkout's .git/config never panics, and
// every URL it returns is a non-empty piece of the file.
func FuzzGitRemoteURLs(f *testing.F) {
	for _, s := range []string{
		"[remote \"origin\"]\n\turl = git@github.com:acme/app.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
		"[core]\nurl = not-a-remote\n[remote \"x\"]\nurl=\"https://h/p\" # c\n",
		"[remote]\nurl = x\n", "[remote \"a\"\nurl = y\n", "url = z", "[remote \"a\"]\nurl =\n", "\xff[remote \"\xfe\"]\nurl = \xfd\n",
		"[remote \"a\"]\n" + strings.Repeat("u", 70000) + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, u := range gitRemoteURLs(data) {
			if u == "" {
				t.Fatal("an empty url")
			}
			if !strings.Contains(string(data), u) {
				t.Fatalf("url %q is not in the file", u)
			}
			_ = normalRemote(u)
		}
	})
}

// TestWorkspaceForMapsCheckouts: a cwd inside a workspace's local repo
// maps to it (the deepest wins); a checkout whose remote is a workspace's
// URL, in any of git's spellings, maps to that one; anything else maps to
// none.
func TestWorkspaceForMapsCheckouts(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	outer := filepath.Join(root, "mono")
	inner := filepath.Join(outer, "svc")
	clone := filepath.Join(root, "clone")
	for _, d := range []string{filepath.Join(inner, "pkg"), filepath.Join(clone, ".git"), filepath.Join(clone, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitConfig := "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@GitHub.com:acme/app.git\n"
	if err := os.WriteFile(filepath.Join(clone, ".git", "config"), []byte(gitConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	list := []config.Workspace{
		{Name: "mono", Repo: outer}, {Name: "svc", Repo: inner},
		{Name: "app", Repo: "https://github.com/acme/app"}, {Name: "other", Repo: "ssh://git@github.com:22/acme/other.git"},
	}
	for cwd, want := range map[string]string{
		outer: "mono", filepath.Join(inner, "pkg"): "svc", filepath.Join(clone, "sub"): "app", clone: "app", root: "",
		outer + "-not": "",
	} {
		got, ok := workspaceFor(cwd, list)
		if got != want || ok != (want != "") {
			t.Errorf("workspaceFor(%s) = %q, %v; want %q", cwd, got, ok, want)
		}
	}
	for _, u := range []string{"https://github.com/acme/app.git", "git@github.com:acme/app", "ssh://git@github.com/acme/app/", "HTTPS://GITHUB.COM/acme/app"} {
		if n := normalRemote(u); n != "github.com/acme/app" {
			t.Errorf("normalRemote(%s) = %s", u, n)
		}
	}
	if !utf8.ValidString(noWorkspace(root, list).Error()) || !strings.Contains(noWorkspace(root, list).Error(), "mono, svc, app, other") {
		t.Errorf("noWorkspace: %v", noWorkspace(root, list))
	}
}
