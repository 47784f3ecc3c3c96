package apitype_test

import (
	"encoding/json"
	"testing"

	"reasonix/runner/apitype"
)

func TestInstructionsOf(t *testing.T) {
	payload := json.RawMessage(`{"commit":"0123456789abcdef0123","files":[{"scope":"user","path":"AGENTS.md","bytes":120},{"scope":"project","path":"REASONIX.md","bytes":33000,"truncated":true}]}`)
	p, ok := apitype.InstructionsOf("instructions", payload)
	if !ok || len(p.Files) != 2 {
		t.Fatalf("InstructionsOf = %+v, %v", p, ok)
	}
	if got := p.Files[0].Name() + " " + apitype.ByteSize(p.Files[0].Bytes); got != "user:AGENTS.md 120 B" {
		t.Errorf("the user's file reads %q", got)
	}
	if got := p.Files[1].Name() + " " + apitype.ByteSize(p.Files[1].Bytes); got != "REASONIX.md 33.0 KB" || !p.Files[1].Truncated {
		t.Errorf("the repository's file reads %q (truncated %v)", got, p.Files[1].Truncated)
	}
	if got := apitype.ShortCommit(p.Commit); got != "0123456789ab" {
		t.Errorf("ShortCommit = %q", got)
	}
	if _, ok := apitype.InstructionsOf("usage", payload); ok {
		t.Error("an event of another type was read as instructions")
	}
	if _, ok := apitype.InstructionsOf("instructions", json.RawMessage(`{"files":"x"}`)); ok {
		t.Error("a payload that is not one was read as instructions")
	}
	if got := apitype.ByteSize(2_500_000); got != "2.5 MB" {
		t.Errorf("ByteSize(2.5e6) = %q", got)
	}
}
