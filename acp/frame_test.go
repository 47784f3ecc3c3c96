package acp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostileFrames are the seeds: partial lines, invalid UTF-8,
// batches, scalars, wrong versions and ids, and good messages among them.
var hostileFrames = []string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n",
	`{"jsonrpc":"2.0","id":1,"method":"initia`,
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\xff\xfe\"}\n",
	"\xc3\x28\n",
	`[{"jsonrpc":"2.0","id":1,"method":"a"}]` + "\n",
	"42\n\"str\"\nnull\n",
	`{"jsonrpc":"1.0","id":1,"method":"a"}` + "\n",
	`{"jsonrpc":"2.0","id":{"a":1},"method":"a"}` + "\n",
	`{"jsonrpc":"2.0","id":1e999999999,"method":"a"}` + "\n",
	`{"jsonrpc":"2.0","method":7}` + "\n",
	`{"jsonrpc":"2.0","id":3}` + "\n",
	`{"jsonrpc":"2.0","id":3,"result":{}}` + "\r\n\n\n",
	`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}` + "\n" + `{"a":`,
	`{"jsonrpc":"2.0","id":1,"method":"a"}{"jsonrpc":"2.0","id":2,"method":"b"}` + "\n",
}

// The framing guard's properties, for any input: every byte it writes
// back is a JSON-RPC error response on its own line; every frame it
// forwards is one valid JSON-RPC object on its own line; and every
// non-blank frame gets exactly one of the two.
func FuzzFraming(f *testing.F) {
	for _, s := range hostileFrames {
		f.Add([]byte(s))
	}
	// Frames over MaxFrame are TestHugeFrameIsAnsweredAndTheNextOneWorks's
	// and TestFrameLimitIsExact's: an 8 MiB seed would slow every fuzz run.
	f.Fuzz(func(t *testing.T, in []byte) {
		var reply, fwd bytes.Buffer
		if err := pump(bytes.NewReader(in), &reply, &fwd); err != nil {
			t.Fatalf("pump: %v", err)
		}
		errs := lines(t, reply.Bytes())
		for _, l := range errs {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if !utf8.Valid(l) || json.Unmarshal(l, &m) != nil || m.JSONRPC != "2.0" || m.Error == nil || m.ID == nil {
				t.Fatalf("reply %q is not a JSON-RPC error response", l)
			}
		}
		good := lines(t, fwd.Bytes())
		for _, l := range good {
			if id, code, _ := checkFrame(l); code != 0 || id != nil || !bytes.Equal(l, bytes.TrimSpace(l)) {
				t.Fatalf("forwarded %q, which the guard refuses", l)
			}
		}
		frames := 0
		for _, fr := range bytes.Split(in, []byte("\n")) {
			if len(bytes.TrimSpace(fr)) > 0 || len(fr) > MaxFrame {
				frames++
			}
		}
		if len(errs)+len(good) != frames {
			t.Fatalf("%d frames in, %d errors and %d forwarded out", frames, len(errs), len(good))
		}
	})
}

func lines(t *testing.T, b []byte) [][]byte {
	t.Helper()
	if len(b) == 0 {
		return nil
	}
	if b[len(b)-1] != '\n' {
		t.Fatalf("output does not end with a newline: %q", b)
	}
	return bytes.Split(b[:len(b)-1], []byte("\n"))
}

func TestHugeFrameIsAnsweredAndTheNextOneWorks(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"a","params":"` + strings.Repeat("x", MaxFrame+10) + `"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"b"}` + "\n"
	var reply, fwd bytes.Buffer
	if err := pump(strings.NewReader(in), &reply, &fwd); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reply.String(), `"code":-32600`) || strings.Count(reply.String(), "\n") != 1 {
		t.Errorf("reply %q, want one -32600", reply.String())
	}
	if fwd.String() != `{"jsonrpc":"2.0","id":2,"method":"b"}`+"\n" {
		t.Errorf("forwarded %q", fwd.String())
	}
}

// Through the whole agent: a bad frame gets an error naming its id where
// it had one, and the connection keeps working.
func TestBadFramesGetErrorsAndTheConnectionSurvives(t *testing.T) {
	c := newClient(t)
	for _, bad := range []string{"\xff\xfe\n", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\n", "[1,2]\n", `{"jsonrpc":"1.0","id":"q","method":"initialize"}` + "\n"} {
		if _, err := c.in.Write([]byte(bad)); err != nil {
			t.Fatal(err)
		}
	}
	c.initialize() // still answered
}

func TestFrameLimitIsExact(t *testing.T) {
	frame := func(n int) string {
		head, tail := `{"jsonrpc":"2.0","id":1,"method":"a","params":"`, `"}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	for _, tc := range []struct {
		size    int
		forward bool
	}{{MaxFrame, true}, {MaxFrame + 1, false}} {
		var reply, fwd bytes.Buffer
		if err := pump(strings.NewReader(frame(tc.size)+"\n"), &reply, &fwd); err != nil {
			t.Fatal(err)
		}
		if got := fwd.Len() > 0; got != tc.forward || (reply.Len() > 0) == tc.forward {
			t.Errorf("a %d-byte frame: forwarded %v, replied %q", tc.size, got, reply.String())
		}
	}
}
