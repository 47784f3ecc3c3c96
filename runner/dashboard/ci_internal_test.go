package dashboard

import (
	"testing"

	"reasonix/runner/store"
)

// A live ci_updated redraws the pull request with its state, so a PR
// merged while the page is open does not still read as open.
func TestPRFromEventKeepsItsState(t *testing.T) {
	pr := prFromEvent(store.Event{Type: "ci_updated", Payload: []byte(`{"state":"success","commit":"0123456789abcdef",
		"pr":{"url":"https://forge.test/p/1","number":1,"state":"merged"},"checks":[{"name":"build","state":"success"}]}`)})
	if pr == nil || pr.State != "merged" || pr.Number != 1 || pr.CI == nil || pr.CI.Passing != 1 {
		t.Fatalf("prFromEvent = %+v, want PR #1 merged with 1 passing check", pr)
	}
	if prFromEvent(store.Event{Type: "ci_updated", Payload: []byte(`[]`)}) != nil {
		t.Error("a payload of another shape gave a pull request")
	}
}
