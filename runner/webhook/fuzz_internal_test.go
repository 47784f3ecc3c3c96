package webhook

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseGitHubSignature: whatever the header, the parser either refuses
// it or returns exactly the 32 bytes that the canonical form encodes.
func FuzzParseGitHubSignature(f *testing.F) {
	for _, s := range []string{ghSignature, "", "sha256=", "sha1=01dc10d0", "sha256=zz", "sha256=" + strings.Repeat("0", 63),
		"SHA256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		mac, err := parseGitHubSignature(header)
		if err != nil {
			return
		}
		if len(mac) != 32 || !strings.EqualFold(header, "sha256="+hex.EncodeToString(mac)) {
			t.Fatalf("%q parsed to %x", header, mac)
		}
	})
}

// FuzzParseStandardSignatures: an accepted header yields 1..maxSignatures
// signatures of 32 bytes, each present in the header as v1,<base64>; and
// a header of at most maxSignatures entries with one well-formed v1 entry
// is accepted with that entry among its signatures, whatever is beside it.
func FuzzParseStandardSignatures(f *testing.F) {
	sig := base64.StdEncoding.EncodeToString(make([]byte, 32))
	for _, s := range []string{"v1," + sig, "v1," + sig + " v1a,xyz", "", " ", "v1,", ",abc", "v1,@@", "v2," + sig,
		strings.Repeat("v1,"+sig+" ", 9), "v1,@@ v1," + sig, "nocomma v1," + sig + " v1,AAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		sigs, err := parseStandardSignatures(header)
		fields := strings.Fields(header)
		if len(fields) <= maxSignatures {
			for _, f := range fields {
				b64, ok := strings.CutPrefix(f, "v1,")
				raw, derr := base64.StdEncoding.Strict().DecodeString(b64)
				if !ok || derr != nil || len(raw) != 32 {
					continue
				}
				if err != nil {
					t.Fatalf("%q has the well-formed entry %q but was refused: %v", header, f, err)
				}
				found := false
				for _, s := range sigs {
					found = found || string(s) == string(raw)
				}
				if !found {
					t.Fatalf("%q: the well-formed entry %q is not among the signatures", header, f)
				}
			}
		}
		if err != nil {
			return
		}
		if len(sigs) == 0 || len(sigs) > maxSignatures {
			t.Fatalf("%q gave %d signatures", header, len(sigs))
		}
		for _, s := range sigs {
			if len(s) != 32 || !strings.Contains(header, "v1,"+base64.StdEncoding.EncodeToString(s)) {
				t.Fatalf("%q gave %x", header, s)
			}
		}
	})
}

// FuzzParseFilter: the parser never panics; an accepted filter's canonical
// form parses again to the same canonical form, and evaluating it on any
// payload terminates without panicking.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`check_run.conclusion == "failure"`, `a == 1 && b != true && c == null`, `a.0.b != "x\"y"`,
		``, `==`, `a ==`, `a = "b"`, `a == "unterminated`, `a == 1e999`, `a == NaN`, `a == "x" || b == "y"`, `a.b.c == -0.5`, `0!="\200"`} {
		f.Add(s)
	}
	payload := map[string]any{"a": 1.0, "b": true, "c": nil, "check_run": map[string]any{"conclusion": "failure"}, "l": []any{"x"}}
	f.Fuzz(func(t *testing.T, src string) {
		flt, err := ParseFilter(src)
		if err != nil {
			return
		}
		flt.Match(payload)
		if len(flt.String()) > maxFilterBytes {
			return // escaping lengthened the canonical form past the source limit
		}
		again, err := ParseFilter(flt.String())
		if err != nil || again.String() != flt.String() {
			t.Fatalf("%q -> %q -> %v, %v", src, flt.String(), again, err)
		}
	})
}

// FuzzCICommit: whatever a verified check delivery holds, the commit it
// names is "" or a full lower-case commit id, and only check events name
// one.
func FuzzCICommit(f *testing.F) {
	sha := strings.Repeat("ab", 20)
	for _, s := range []string{`{"check_suite":{"head_sha":"` + sha + `"}}`, `{"check_run":{"head_sha":"` + strings.ToUpper(sha) + `"}}`,
		`{"sha":"` + sha + `"}`, `{"sha":"../../etc"}`, `{"sha":"` + sha + `0"}`, `{"sha":12}`, `{"sha":["` + sha + `"]}`,
		`{"check_suite":"x"}`, `null`, `{"object_attributes":{"sha":"` + sha + `"}}`, `{"sha":"` + strings.Repeat("0", 64) + `"}`, `{"sha":"` + strings.Repeat("g", 40) + `"}`} {
		for _, ev := range []string{"check_suite", "check_run", "status", "push", "pipeline", "build"} {
			f.Add(ev, s)
		}
	}
	f.Fuzz(func(t *testing.T, event, body string) {
		var payload any
		if json.Unmarshal([]byte(body), &payload) != nil {
			return
		}
		got := ciCommit("github", event, payload)
		if got == "" {
			return
		}
		if event != "check_suite" && event != "check_run" && event != "status" {
			t.Fatalf("event %q named commit %q", event, got)
		}
		if (len(got) != 40 && len(got) != 64) || strings.Trim(got, "0123456789abcdef") != "" {
			t.Fatalf("commit %q from %s", got, body)
		}
		if ciCommit("hmac", event, payload) != "" {
			t.Fatal("an hmac webhook named a commit")
		}
		if gl := ciCommit("gitlab", event, payload); gl != "" && (event != "pipeline" && event != "build" ||
			len(gl) != 40 && len(gl) != 64 || strings.Trim(gl, "0123456789abcdef") != "") {
			t.Fatalf("a gitlab %q event named commit %q", event, gl)
		}
	})
}
