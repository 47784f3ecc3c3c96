package builtin

import (
	"bytes"
	"strings"
	"testing"
)

func TestHeadTailKeepsBothEnds(t *testing.T) {
	h := newHeadTail(4)
	for _, chunk := range []string{"ab", "cdef", "gh", "ijklmnop", "q"} {
		if n, err := h.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	head, tail, dropped := h.parts()
	if string(head) != "abcd" || string(tail) != "nopq" || dropped != 9 {
		t.Errorf("head %q tail %q dropped %d", head, tail, dropped)
	}
	if got := h.String(); got != "abcd\n\n[... 9 bytes of output omitted ...]\n\nnopq" {
		t.Errorf("String = %q", got)
	}
	small := newHeadTail(4)
	small.Write([]byte("abcdef"))
	if got := small.String(); got != "abcdef" {
		t.Errorf("unbroken output = %q", got)
	}
}

func TestHeadTailDoesNotSplitRunes(t *testing.T) {
	h := newHeadTail(5)
	h.Write([]byte(strings.Repeat("é", 20))) // 40 bytes, runes of 2
	got := h.String()
	if !strings.HasPrefix(got, "éé\n") || !strings.HasSuffix(got, "\néé") {
		t.Errorf("String = %q", got)
	}
}

// FuzzHeadTail compares the ring buffer with the obvious slicing of the
// whole stream, for random chunkings.
func FuzzHeadTail(f *testing.F) {
	f.Add([]byte("hello world, this is a longer stream"), uint8(4), []byte{3, 1, 7})
	f.Add([]byte("x"), uint8(1), []byte{0})
	f.Add(bytes.Repeat([]byte("ab"), 40), uint8(7), []byte{16, 2})
	f.Fuzz(func(t *testing.T, data []byte, keep uint8, cuts []byte) {
		max := int(keep%32) + 1
		h := newHeadTail(max)
		rest := data
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(cuts) > 0 {
				n = min(int(cuts[i%len(cuts)])+1, len(rest))
			}
			h.Write(rest[:n])
			rest = rest[n:]
		}
		head, tail, dropped := h.parts()
		if len(data) <= 2*max {
			if got := string(head) + string(tail); got != string(data) || dropped != 0 {
				t.Fatalf("max %d: kept %q dropped %d, want %q", max, got, dropped, data)
			}
			return
		}
		if string(head) != string(data[:max]) || string(tail) != string(data[len(data)-max:]) || dropped != int64(len(data)-2*max) {
			t.Fatalf("max %d: head %q tail %q dropped %d for %q", max, head, tail, dropped, data)
		}
	})
}
