package builtin

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func readLines(t *testing.T, input string, max int) (lines []string, cuts []int) {
	t.Helper()
	lr := newLineReader(strings.NewReader(input), max)
	for {
		line, cut, err := lr.next()
		if errors.Is(err, io.EOF) {
			return lines, cuts
		}
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(line))
		cuts = append(cuts, cut)
	}
}

func TestLineReader(t *testing.T) {
	lines, cuts := readLines(t, "a\r\nbcdefgh\n\nxyzé", 4)
	want := []string{"a", "bcde", "", "xyz"}
	wantCuts := []int{0, 3, 0, 2}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", lines, want)
	}
	for i := range wantCuts {
		if cuts[i] != wantCuts[i] {
			t.Errorf("cut[%d] = %d, want %d", i, cuts[i], wantCuts[i])
		}
	}
	// A line far longer than the read buffer costs only max bytes.
	lines, cuts = readLines(t, strings.Repeat("z", 300_000)+"\nend", 10)
	if len(lines) != 2 || lines[0] != strings.Repeat("z", 10) || cuts[0] != 299_990 || lines[1] != "end" {
		t.Errorf("long line: %d lines, cut %v", len(lines), cuts)
	}
}

// FuzzLineReader checks that every line is a prefix of the real line, that
// what was kept plus what was cut is the whole line, and that nothing is
// lost or invented between lines.
func FuzzLineReader(f *testing.F) {
	f.Add("one\ntwo\r\nthree", uint8(3))
	f.Add("\n\n\n", uint8(1))
	f.Add("ééé\r\n", uint8(3))
	f.Add("", uint8(0))
	f.Fuzz(func(t *testing.T, input string, m uint8) {
		max := int(m%64) + 1
		lines, cuts := readLines(t, input, max)
		ref := strings.Split(input, "\n")
		if strings.HasSuffix(input, "\n") || input == "" {
			ref = ref[:len(ref)-1]
		}
		if len(lines) != len(ref) {
			t.Fatalf("got %d lines, want %d", len(lines), len(ref))
		}
		for i, r := range ref {
			got := lines[i]
			if len(got) > max {
				t.Fatalf("line %d is %d bytes, max %d", i, len(got), max)
			}
			if cuts[i] == 0 {
				if got != strings.TrimSuffix(r, "\r") {
					t.Fatalf("line %d = %q, want %q", i, got, r)
				}
				continue
			}
			if !strings.HasPrefix(r, got) || len(got)+cuts[i] != len(r) {
				t.Fatalf("line %d = %q + %d cut, real %q", i, got, cuts[i], r)
			}
		}
	})
}
