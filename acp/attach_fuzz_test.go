package acp

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// FuzzAttachHello: the agent takes a token only from a hello line that is
// exactly the prefix and 64 lower-case hex digits; anything else (a long
// line, a missing newline, upper case, trailing bytes) is refused.
func FuzzAttachHello(f *testing.F) {
	good := string(hello(strings.Repeat("0f", 32)))
	for _, s := range []string{good, good[:len(good)-1], strings.ToUpper(good), good + good,
		helloPrefix + strings.Repeat("a", 63) + "\n", helloPrefix + strings.Repeat("a", 65) + "\n",
		helloPrefix + strings.Repeat("g", 64) + "\n", "\n", "", strings.Repeat("x", 1<<16),
		"reasonix-attach 2 " + strings.Repeat("ab", 32) + "\n", helloPrefix + strings.Repeat("ab", 31) + "a\x00\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, ok := readHello(bytes.NewReader(data))
		if !ok {
			return
		}
		if !bytes.HasPrefix(data, hello(tok)) || len(tok) != 64 || strings.Trim(tok, "0123456789abcdef") != "" {
			t.Fatalf("took %q from %q", tok, data)
		}
	})
}

// FuzzAttachFrames: whatever comes over the socket, attach shows at most
// the bytes it was sent, never panics, and accepts an exit status only
// from a well-formed exit frame; a well-formed stream shows exactly its
// output and its status.
func FuzzAttachFrames(f *testing.F) {
	var good bytes.Buffer
	writeFrame(&good, frameOut, []byte("hello\n"))
	writeFrame(&good, frameOut, []byte{0xff, 0xfe, 0})
	writeFrame(&good, frameStatus, []byte{0, 0, 0, 3})
	huge := []byte{frameOut, 0xff, 0xff, 0xff, 0xff}
	short := []byte{frameOut, 0, 0, 0, 9, 'a'}
	for _, s := range [][]byte{good.Bytes(), good.Bytes()[:7], huge, short, {frameRefused, 0, 0, 0, 2, 'n', 'o'},
		{frameStatus, 0, 0, 0, 1, 1}, {'?', 0, 0, 0, 0}, {}} {
		f.Add(s, []byte("output"), int32(0))
	}
	f.Add([]byte{}, []byte{}, int32(-1))
	f.Fuzz(func(t *testing.T, data, output []byte, code int32) {
		var out bytes.Buffer
		got, err := showFrames(bytes.NewReader(data), &out)
		if out.Len() > len(data) {
			t.Fatalf("showed %d bytes of %d", out.Len(), len(data))
		}
		if err == nil && !bytes.Contains(data, []byte{frameStatus, 0, 0, 0, 4}) {
			t.Fatalf("status %d without an exit frame in %q", got, data)
		}

		var stream bytes.Buffer
		if err := sendOutput(&stream, output, 0); err != nil {
			t.Fatal(err)
		}
		var p [4]byte
		binary.BigEndian.PutUint32(p[:], uint32(code))
		writeFrame(&stream, frameStatus, p[:])
		out.Reset()
		got, err = showFrames(&stream, &out)
		if err != nil || got != int(code) || !bytes.Equal(out.Bytes(), output) {
			t.Fatalf("a good stream: %d, %v, %q; want %d, %q", got, err, out.Bytes(), code, output)
		}
	})
}
