package posture

import (
	"encoding/json"
	"flag"
	"io"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Posture{"": Ask, "ask": Ask, "auto": Auto, "yolo": Yolo} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"allow", "deny", "auto-ish", "YOLO", " auto"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
	if Ask.Rank() >= Auto.Rank() || Auto.Rank() >= Yolo.Rank() || Posture("x").Rank() != 0 {
		t.Error("ranks are out of order")
	}
}

// The same parse runs behind JSON bodies and flags.
func TestEdgesParseTheSameWay(t *testing.T) {
	var body struct{ Posture Posture }
	if err := json.Unmarshal([]byte(`{"Posture":"yolo"}`), &body); err != nil || body.Posture != Yolo {
		t.Fatalf("json: %q, %v", body.Posture, err)
	}
	if err := json.Unmarshal([]byte(`{"Posture":"root"}`), &body); err == nil {
		t.Fatal("json accepted an unknown posture")
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := Ask
	fs.TextVar(&p, "posture", Ask, "")
	if err := fs.Parse([]string{"--posture", "auto"}); err != nil || p != Auto {
		t.Fatalf("flag: %q, %v", p, err)
	}
	if err := fs.Parse([]string{"--posture", "bogus"}); err == nil {
		t.Fatal("flag accepted an unknown posture")
	}
}
