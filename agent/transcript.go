package agent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// transcriptRecord is one line of a JSONL transcript.
type transcriptRecord struct {
	Time time.Time `json:"time"`
	Event
}

// Transcript appends a run's events, one JSON object per line, as they
// happen, so a crash loses at most the line being written. Text deltas are
// left out: the assistant message that follows carries the whole text.
type Transcript struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// NewTranscript writes to w. The caller owns w and closes it after the run.
func NewTranscript(w io.Writer) *Transcript { return &Transcript{w: w} }

// Observe records e. It is an Observer; the first write error is kept and
// later events are dropped (see Err).
func (t *Transcript) Observe(e Event) {
	if e.Type == EventTextDelta {
		return
	}
	line, err := json.Marshal(transcriptRecord{Time: time.Now().UTC(), Event: e})
	if err != nil {
		t.setErr(fmt.Errorf("agent: encoding transcript event: %w", err))
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return
	}
	if _, err := t.w.Write(append(line, '\n')); err != nil {
		t.err = fmt.Errorf("agent: writing transcript: %w", err)
	}
}

// Err returns the first error met while writing, if any.
func (t *Transcript) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

func (t *Transcript) setErr(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = err
	}
}

// ReadTranscript rebuilds the conversation recorded in a JSONL transcript,
// for resuming a run. A torn last line (a crash mid-write) is ignored; a
// malformed line elsewhere is an error naming its number.
func ReadTranscript(r io.Reader) ([]Message, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	var (
		msgs    []Message
		pending error
		n       int
	)
	for sc.Scan() {
		n++
		if pending != nil {
			return nil, pending
		}
		var rec transcriptRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			pending = fmt.Errorf("agent: transcript line %d: %w", n, err)
			continue
		}
		if rec.Type == EventMessage && rec.Message != nil {
			msgs = append(msgs, *rec.Message)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("agent: reading transcript: %w", err)
	}
	return msgs, nil
}

// Observers fans events out to several observers in order; nil ones are skipped.
func Observers(obs ...Observer) Observer {
	return func(e Event) {
		for _, o := range obs {
			if o != nil {
				o(e)
			}
		}
	}
}
