package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// record is what Prepare made for a task, kept beside the worktrees so that
// Finish, Remove and a Prepare after a restart know the repository and base
// without the caller carrying them.
type record struct {
	Task      string `json:"task"`
	Spec      string `json:"spec"`
	Repo      string `json:"repo"`       // the configured repo, redacted
	GitDir    string `json:"git_dir"`    // the repository's common git directory
	Base      string `json:"base"`       // the commit the branch started from
	SetupDone bool   `json:"setup_done"` // false while setup runs: a crash then leaves a broken worktree
	// Layout is how git linked the worktree when it added it; nil in a
	// record written before layouts were kept (legacyLayout then).
	Layout *layout `json:"layout,omitempty"`
}

func (m *Manager) recordPath(taskID string) string {
	return filepath.Join(m.root, "meta", taskID+".json")
}

// readRecord returns the task's record, or (nil, nil) when there is none.
func (m *Manager) readRecord(taskID string) (*record, error) {
	data, err := os.ReadFile(m.recordPath(taskID))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: read record of task %s: %w", taskID, err)
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil || r.Task != taskID || r.GitDir == "" {
		// A torn or foreign file is no record: Prepare rebuilds it.
		m.log.Warn("workspace: ignoring unreadable task record", "task", taskID)
		return nil, nil
	}
	return &r, nil
}

// writeRecord replaces the task's record atomically, so a crash leaves the
// old record or the new one, never a torn file.
func (m *Manager) writeRecord(r *record) error {
	dir := filepath.Join(m.root, "meta")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("workspace: write record: %w", err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("workspace: write record: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tmp-"+r.Task+"-*")
	if err != nil {
		return fmt.Errorf("workspace: write record: %w", err)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("workspace: write record: %w", err)
	}
	if err := os.Rename(f.Name(), m.recordPath(r.Task)); err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("workspace: write record: %w", err)
	}
	return nil
}
