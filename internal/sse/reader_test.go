package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t testing.TB, r *Reader) ([]Event, error) {
	t.Helper()
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestReaderParsesFields(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []Event
	}{
		{"single", "data: hello\n\n", []Event{{Data: "hello"}}},
		{"multi-line data joined with LF", "data: a\ndata: b\n\n", []Event{{Data: "a\nb"}}},
		{"event type and id", "event: ping\nid: 7\ndata: x\n\n", []Event{{Type: "ping", Data: "x", ID: "7"}}},
		{"id persists", "id: 1\ndata: a\n\ndata: b\n\n", []Event{{Data: "a", ID: "1"}, {Data: "b", ID: "1"}}},
		{"comments ignored", ": keep-alive\n\n:x\ndata: y\n\n", []Event{{Data: "y"}}},
		{"CRLF", "data: a\r\ndata: b\r\n\r\n", []Event{{Data: "a\nb"}}},
		{"CR only", "data: a\rdata: b\r\r", []Event{{Data: "a\nb"}}},
		{"no space after colon", "data:x\n\n", []Event{{Data: "x"}}},
		{"only one space stripped", "data:  x\n\n", []Event{{Data: " x"}}},
		{"field without colon", "data\n\n", []Event{{Data: ""}}},
		{"event without data not dispatched", "event: x\n\ndata: y\n\n", []Event{{Data: "y"}}},
		{"event type reset after dispatch", "event: a\ndata: 1\n\ndata: 2\n\n", []Event{{Type: "a", Data: "1"}, {Data: "2"}}},
		{"unterminated event dropped", "data: a\n\ndata: b\n", []Event{{Data: "a"}}},
		{"unterminated line dropped", "data: a\n\ndata: b", []Event{{Data: "a"}}},
		{"BOM stripped", "\xEF\xBB\xBFdata: a\n\n", []Event{{Data: "a"}}},
		{"unknown fields ignored", "retry: 10\nfoo: bar\ndata: a\n\n", []Event{{Data: "a"}}},
		{"id with NUL ignored", "id: a\x00b\ndata: a\n\n", []Event{{Data: "a"}}},
		{"colon in value kept", "data: {\"a\":1}\n\n", []Event{{Data: `{"a":1}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time exercises every split point, in particular a
			// CRLF pair split across two reads.
			for _, src := range []io.Reader{strings.NewReader(tt.input), iotest.OneByteReader(strings.NewReader(tt.input))} {
				got, err := readAll(t, NewReader(src, 0))
				if !errors.Is(err, io.EOF) {
					t.Fatalf("err = %v, want io.EOF", err)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("got %d events %q, want %q", len(got), got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("event %d = %+v, want %+v", i, got[i], tt.want[i])
					}
				}
			}
		})
	}
}

func TestReaderCRLFSplitAcrossReadsYieldsNoExtraBlankLine(t *testing.T) {
	// If the LF of a CRLF were taken as a line of its own, "data: a\r" "\n"
	// "data: b" would dispatch two events instead of one.
	src := iotest.OneByteReader(strings.NewReader("data: a\r\ndata: b\r\n\r\n"))
	got, err := readAll(t, NewReader(src, 0))
	if !errors.Is(err, io.EOF) || len(got) != 1 || got[0].Data != "a\nb" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestReaderLimitsLineAndEventSize(t *testing.T) {
	long := "data: " + strings.Repeat("x", 100) + "\n\n"
	_, err := readAll(t, NewReader(strings.NewReader(long), 64))
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("long line: err = %v, want ErrEventTooLarge", err)
	}
	// Many short data lines that together exceed the limit.
	many := strings.Repeat("data: 0123456789\n", 10) + "\n"
	r := NewReader(strings.NewReader(many), 64)
	_, err = readAll(t, r)
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("many lines: err = %v, want ErrEventTooLarge", err)
	}
	if _, err := r.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("error is not sticky: %v", err)
	}
	// Exactly at the limit is fine.
	exact := "data: " + strings.Repeat("x", 58) + "\n\n" // line is 64 bytes
	got, err := readAll(t, NewReader(strings.NewReader(exact), 64))
	if !errors.Is(err, io.EOF) || len(got) != 1 {
		t.Fatalf("exact: got %d events, err %v", len(got), err)
	}
}

func TestReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("boom")
	src := io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(boom))
	got, err := readAll(t, NewReader(src, 0))
	if len(got) != 1 || !errors.Is(err, boom) {
		t.Fatalf("got %q, err %v; want one event and boom", got, err)
	}
}

func FuzzReader(f *testing.F) {
	seeds := []string{
		"data: hello\n\n",
		"event: e\nid: 1\ndata: a\ndata: b\n\n",
		"data: a\r\n\r\ndata: b\r\r",
		": comment\n\n",
		"data: {\"choices\":[]}\n\ndata: [DONE]\n\n",
		"\xEF\xBB\xBFdata:x\n\n",
		"data\n\nid\x00\n\n",
		"",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const limit = 256
		r := NewReader(strings.NewReader(string(in)), limit)
		total := 0
		for {
			ev, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrEventTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(ev.Data) > limit {
				t.Fatalf("event data of %d bytes exceeds limit %d", len(ev.Data), limit)
			}
			total += len(ev.Data)
			if total > len(in) {
				t.Fatalf("decoded %d data bytes from %d input bytes", total, len(in))
			}
		}
	})
}
