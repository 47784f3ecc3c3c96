package ids

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHexHasTheLengthAskedAndDiffers(t *testing.T) {
	a, b := Hex(4), Hex(4)
	if len(a) != 8 || strings.Trim(a, "0123456789abcdef") != "" {
		t.Fatalf("Hex(4) = %q", a)
	}
	if a == b {
		t.Fatalf("two references are the same: %q", a)
	}
}

func TestSortableSortsByTime(t *testing.T) {
	base := time.UnixMilli(1_700_000_000_000)
	var got []string
	for i := range 50 {
		got = append(got, Sortable("t_", base.Add(time.Duration(i)*time.Millisecond)))
	}
	if !slices.IsSorted(got) {
		t.Fatalf("ids out of creation order: %v", got)
	}
	for _, id := range got {
		if !strings.HasPrefix(id, "t_") || len(id) != 28 || strings.ContainsAny(id[2:], "ilou") {
			t.Fatalf("id %q is not prefix + 26 Crockford characters", id)
		}
	}
}
