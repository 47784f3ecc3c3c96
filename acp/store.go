package acp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"reasonix/agent"
)

// A persisted session is a directory under the store: meta.json (what
// session/list shows) and transcript.jsonl (the agent's events, the same
// format as `reasonix run`'s transcripts, which session/load replays and
// restores the conversation from).
const (
	metaFile       = "meta.json"
	transcriptFile = "transcript.jsonl"
)

// sessionIDPattern is what a session id must look like before it becomes a
// path: ids come from the client, and "../x" must never reach the disk.
var sessionIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^s_[0-9a-f]{20}$`) })

var errNoSession = errors.New("acp: no such session")

type meta struct {
	ID      string    `json:"id"`
	Cwd     string    `json:"cwd"`
	Title   string    `json:"title,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

type store struct{ dir string }

func newSessionID() string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return "s_" + hex.EncodeToString(b[:])
}

func (s store) path(id string) (string, error) {
	if !sessionIDPattern().MatchString(id) {
		return "", errNoSession
	}
	return filepath.Join(s.dir, id), nil
}

// create makes the session's directory and meta and opens its transcript
// for appending.
func (s store) create(m meta) (*os.File, error) {
	dir, err := s.path(m.ID)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("acp: the session directory: %w", err)
	}
	if err := s.saveMeta(m); err != nil {
		return nil, err
	}
	return s.openTranscript(m.ID)
}

func (s store) openTranscript(id string) (*os.File, error) {
	dir, err := s.path(id)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, transcriptFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("acp: the session transcript: %w", err)
	}
	return f, nil
}

func (s store) saveMeta(m meta) error {
	dir, err := s.path(m.ID)
	if err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, metaFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("acp: saving the session: %w", err)
	}
	return os.Rename(tmp, filepath.Join(dir, metaFile))
}

func (s store) meta(id string) (meta, error) {
	dir, err := s.path(id)
	if err != nil {
		return meta{}, err
	}
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if errors.Is(err, os.ErrNotExist) {
		return meta{}, errNoSession
	}
	if err != nil {
		return meta{}, fmt.Errorf("acp: reading the session: %w", err)
	}
	var m meta
	if err := json.Unmarshal(b, &m); err != nil || m.ID != id {
		return meta{}, fmt.Errorf("acp: the session %s is damaged", id)
	}
	return m, nil
}

// history is the conversation recorded in the session's transcript.
func (s store) history(id string) ([]agent.Message, error) {
	dir, err := s.path(id)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, transcriptFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("acp: reading the transcript: %w", err)
	}
	defer f.Close()
	return agent.ReadTranscript(f)
}

// list is every persisted session, newest first.
func (s store) list() []meta {
	ents, _ := os.ReadDir(s.dir)
	var out []meta
	for _, e := range ents {
		if !e.IsDir() || !sessionIDPattern().MatchString(e.Name()) {
			continue
		}
		if m, err := s.meta(e.Name()); err == nil {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b meta) int { return b.Updated.Compare(a.Updated) })
	return out
}

func (s store) remove(id string) error {
	dir, err := s.path(id)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, metaFile)); err != nil {
		return errNoSession
	}
	return os.RemoveAll(dir)
}
