package agent_test

import (
	"reflect"
	"strings"
	"testing"

	"reasonix/agent"
)

func TestParseDigest(t *testing.T) {
	d, err := agent.ParseDigest("```markdown\n## Goal and constraints\n  keep the API \n\n## Done so far\n- a\n- b\n```")
	if err != nil {
		t.Fatal(err)
	}
	want := agent.Digest{Sections: []agent.DigestSection{{Title: "Goal and constraints", Body: "keep the API"}, {Title: "Done so far", Body: "- a\n- b"}}}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("parsed %+v", d)
	}
	if d.String() != "## Goal and constraints\nkeep the API\n\n## Done so far\n- a\n- b" {
		t.Fatalf("rendered %q", d.String())
	}
	plain, err := agent.ParseDigest("just prose\n##no heading")
	if err != nil || len(plain.Sections) != 1 || plain.Sections[0].Title != "" {
		t.Fatalf("plain text: %+v, %v", plain, err)
	}
	// A fence that wraps no headings is content, not a wrapper.
	code, _ := agent.ParseDigest("```go\nx := 1\n```")
	if !strings.Contains(code.String(), "```go") {
		t.Fatalf("code fence stripped: %q", code.String())
	}
	for _, empty := range []string{"", "  \n\t", "\n\n"} {
		if _, err := agent.ParseDigest(empty); err == nil {
			t.Errorf("%q parsed", empty)
		}
	}
}

// Model output is untrusted: any text parses without panicking, a parsed
// digest renders to text that parses back to the same digest, and the
// rendering is never much larger than the input.
func FuzzParseDigest(f *testing.F) {
	for _, s := range []string{
		"## A\nb",
		"```\n## A\nb\n```",
		"```md\n```\n## A\n```",
		"pre\n## A\n\n## B\nx\n## \n##\n",
		"\r\n## A\r\nb\r\n",
		"## A\n## A\n## A",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := agent.ParseDigest(s)
		if err != nil {
			return
		}
		out := d.String()
		if len(out) > len(s)+4*len(d.Sections) {
			t.Fatalf("rendering grew from %d to %d bytes", len(s), len(out))
		}
		again, err := agent.ParseDigest(out)
		if err != nil {
			t.Fatalf("rendered digest %q does not parse: %v", out, err)
		}
		if !reflect.DeepEqual(again, d) {
			t.Fatalf("round trip changed the digest:\n%+v\n%+v", d, again)
		}
	})
}
