package acp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// The attach wire: `reasonix acp attach SOCKET`, run by the editor as a
// terminal's command, shows a bash command that runs in Reasonix's
// sandbox. It connects to the agent's private Unix socket and sends one
// hello line with the one-time token its environment carries; the agent
// answers with frames: a type byte, a 4-byte big-endian length, the
// payload. 'O' is output as the command produced it, 'X' its exit status
// (a 4-byte big-endian int32; the last frame), 'E' a refusal (its text;
// the last frame). Nothing else is read from the attach after its hello:
// the connection ending before the command did (the editor killed the
// terminal) stops the command.

// AttachTokenEnv is the variable that gives `reasonix acp attach` its
// one-time token: in terminal/create's env, never in its arguments.
const AttachTokenEnv = "REASONIX_ATTACH_TOKEN"

const (
	helloPrefix = "reasonix-attach 1 "
	// tokenBytes is the token's size: 256 bits, sent as 64 hex digits.
	tokenBytes = 32
	// maxHello bounds the hello line the agent reads.
	maxHello = len(helloPrefix) + 2*tokenBytes + 1
	// maxFrame bounds a frame's payload.
	maxFrame = 64 << 10

	frameOut     = 'O'
	frameStatus  = 'X'
	frameRefused = 'E'
)

// hello is the attach's first line.
func hello(token string) []byte { return []byte(helloPrefix + token + "\n") }

// parseHello returns the token of a hello line (without its newline): 64
// lower-case hex digits after the prefix, nothing else.
func parseHello(line []byte) (string, bool) {
	tok, ok := bytes.CutPrefix(line, []byte(helloPrefix))
	if !ok || len(tok) != 2*tokenBytes {
		return "", false
	}
	for _, c := range tok {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
	}
	return string(tok), true
}

// readHello reads the hello line from r, at most maxHello bytes.
func readHello(r io.Reader) (string, bool) {
	br := bufio.NewReaderSize(io.LimitReader(r, int64(maxHello)), maxHello)
	line, err := br.ReadSlice('\n')
	if err != nil {
		return "", false
	}
	return parseHello(line[:len(line)-1])
}

// writeFrame writes one frame.
func writeFrame(w io.Writer, typ byte, payload []byte) error {
	var h [5]byte
	h[0] = typ
	binary.BigEndian.PutUint32(h[1:], uint32(len(payload)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// readFrame reads one frame; a payload over maxFrame is an error.
func readFrame(r io.Reader) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("a frame of %d bytes (at most %d)", n, maxFrame)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return 0, nil, io.ErrUnexpectedEOF
	}
	return h[0], p, nil
}

// errAttachEnded is a connection that ended before the exit status.
var errAttachEnded = errors.New("the agent ended the connection before the command's exit status")

// showFrames copies the output frames of r to out until the exit frame,
// and returns the exit status it carries. A refusal, an unknown frame or
// an early end is an error.
func showFrames(r io.Reader, out io.Writer) (int, error) {
	br := bufio.NewReader(r)
	for {
		typ, p, err := readFrame(br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return 0, errAttachEnded
			}
			return 0, err
		}
		switch typ {
		case frameOut:
			if _, err := out.Write(p); err != nil {
				return 0, err
			}
		case frameStatus:
			if len(p) != 4 {
				return 0, fmt.Errorf("an exit frame of %d bytes", len(p))
			}
			return int(int32(binary.BigEndian.Uint32(p))), nil
		case frameRefused:
			return 0, fmt.Errorf("refused: %s", bytes.ToValidUTF8(p, []byte("?")))
		default:
			return 0, fmt.Errorf("an unknown frame %q", typ)
		}
	}
}

// Attach is `reasonix acp attach`: it connects to socket, presents token,
// and copies the command's output to out as it comes. It returns the
// command's exit status; an error when the agent refused the token or
// the connection failed.
func Attach(ctx context.Context, socket, token string, out io.Writer) (int, error) {
	if _, ok := parseHello([]byte(helloPrefix + token)); !ok {
		return 0, fmt.Errorf("no attach token: %s must hold the one-time token", AttachTokenEnv)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := conn.Write(hello(token)); err != nil {
		return 0, err
	}
	return showFrames(conn, out)
}

// newToken is a one-time attach token.
func newToken() string {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// ExitStatus is the process exit status `reasonix acp attach` ends with
// for a command's exit status: the same when it is one (0–255), else 1.
func ExitStatus(code int) int {
	if code < 0 || code > 255 {
		return 1
	}
	return code
}
