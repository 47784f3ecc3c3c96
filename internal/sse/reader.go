// Package sse reads server-sent events (the text/event-stream format) from an
// untrusted byte stream. It follows the WHATWG parsing rules for the fields a
// client needs (event, data, id, comments, all three line endings) and bounds
// the memory one event may take, so a hostile or broken server cannot make the
// reader buffer without limit.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEventSize is the limit NewReader applies when given a size <= 0.
// It is far above any legitimate model stream event and far below a size
// that would hurt the process.
const DefaultMaxEventSize = 8 << 20

// ErrEventTooLarge means one line or one event exceeded the reader's limit.
// The reader cannot resynchronise after it, so every later Next fails too.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one dispatched event.
type Event struct {
	// Type is the value of the last "event:" field, or "" for the default
	// "message" type.
	Type string
	// Data is the "data:" lines of the event joined with "\n".
	Data string
	// ID is the last event ID seen on the stream so far, as the format
	// defines it: it persists across events until another "id:" changes it.
	ID string
}

// Reader splits a text/event-stream into events. It is not safe for
// concurrent use.
type Reader struct {
	sc      *bufio.Scanner
	max     int
	skipLF  bool // the previous line ended with CR, so a leading LF belongs to it
	first   bool // no line read yet: a leading byte order mark is dropped
	lastID  string
	err     error
	data    []byte
	evType  string
	hasData bool
}

// NewReader returns a Reader that reads from r and refuses any line or event
// larger than maxEventSize bytes (DefaultMaxEventSize when <= 0).
func NewReader(r io.Reader, maxEventSize int) *Reader {
	if maxEventSize <= 0 {
		maxEventSize = DefaultMaxEventSize
	}
	rd := &Reader{max: maxEventSize, first: true}
	rd.sc = bufio.NewScanner(r)
	// The scanner's own limit bounds a single line; the +1 leaves room for
	// the terminator so a line of exactly max bytes is still accepted.
	rd.sc.Buffer(make([]byte, 0, 4096), maxEventSize+1)
	rd.sc.Split(rd.splitLines)
	return rd
}

// splitLines is a bufio.SplitFunc for the three line endings of the format.
// A CR is a complete terminator on its own, so a line ending in CR is
// returned at once instead of waiting to see whether an LF follows; the LF,
// if it comes, is then skipped. This keeps CR-only streams from lagging one
// read behind.
func (r *Reader) splitLines(data []byte, atEOF bool) (int, []byte, error) {
	start := 0
	if r.skipLF && len(data) > 0 {
		r.skipLF = false
		if data[0] == '\n' {
			start = 1
		}
	}
	if i := bytes.IndexAny(data[start:], "\r\n"); i >= 0 {
		end := start + i
		if data[end] == '\r' {
			r.skipLF = true
		}
		return end + 1, data[start:end], nil
	}
	if atEOF {
		// An unterminated last line may be a truncated one; the format says
		// an event is only complete at a blank line, so it is dropped.
		return len(data), nil, nil
	}
	if start > 0 {
		return start, nil, nil
	}
	return 0, nil, nil
}

// Next returns the next event. It returns io.EOF when the stream ends (an
// event not terminated by a blank line is discarded, as the format requires),
// ErrEventTooLarge when the limit was exceeded, or the underlying read error.
// Events without data are not dispatched, as the format requires.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if r.first {
			r.first = false
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if err := r.field(line); err != nil {
			r.err = err
			return Event{}, err
		}
	}
	err := r.sc.Err()
	switch {
	case errors.Is(err, bufio.ErrTooLong):
		err = fmt.Errorf("%w: a line is longer than %d bytes", ErrEventTooLarge, r.max)
	case err == nil:
		err = io.EOF
	}
	r.err = err
	return Event{}, err
}

// field applies one non-empty line to the event being assembled.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil // a comment, typically a keep-alive
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		value = bytes.TrimPrefix(value, []byte(" "))
	}
	switch string(name) {
	case "data":
		if len(r.data)+len(value)+1 > r.max {
			return fmt.Errorf("%w: an event is larger than %d bytes", ErrEventTooLarge, r.max)
		}
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
		r.hasData = true
	case "event":
		r.evType = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.lastID = string(value)
		}
	}
	// "retry" and unknown fields are ignored: the caller decides about
	// reconnection, and the format says to ignore what it does not know.
	return nil
}

// dispatch ends the current event at a blank line.
func (r *Reader) dispatch() (Event, bool) {
	defer func() {
		r.data = r.data[:0]
		r.evType = ""
		r.hasData = false
	}()
	if !r.hasData {
		return Event{}, false
	}
	data := r.data[:len(r.data)-1] // drop the final "\n"
	return Event{Type: r.evType, Data: string(data), ID: r.lastID}, true
}
