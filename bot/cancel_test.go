package bot

import (
	"strings"
	"testing"
)

func TestCancelButtonRoundTrip(t *testing.T) {
	id, err := ParseCancelButton(CancelButton("t_01ABCDEF"))
	if err != nil || id != "t_01ABCDEF" {
		t.Fatalf("= %q, %v", id, err)
	}
	for _, bad := range []string{"", "cx:", "cx:a", "cx:t_1;rm", "ap:a_0123456789:o", "cx:" + strings.Repeat("a", 70), "CX:t_01ABCDEF", "cx:t_01 ABC"} {
		if _, err := ParseCancelButton(bad); err != ErrButton {
			t.Errorf("%q: err = %v, want ErrButton", bad, err)
		}
	}
}

// FuzzParseCancelButton: whatever a click carries, a parse that succeeds
// yields an id that makes the very same data again, of the id alphabet,
// and never an approval button.
func FuzzParseCancelButton(f *testing.F) {
	for _, s := range []string{"cx:t_01ABCDEF", "cx:", "cx:../../x", "cx:t_1\x00", "ap:a_1:o", "cx:" + strings.Repeat("z", 64), "cx:t_é", "cx:t_1:extra"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		id, err := ParseCancelButton(data)
		if err != nil {
			return
		}
		if CancelButton(id) != data || !validID(id) {
			t.Fatalf("%q parsed as %q", data, id)
		}
		if _, _, err := ParseApprovalButton(data); err == nil {
			t.Fatalf("%q is both a cancel and an approval button", data)
		}
	})
}
