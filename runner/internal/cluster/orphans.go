package cluster

import (
	"context"
	"encoding/json"
	"log/slog"

	"reasonix/internal/procgroup"
	"reasonix/runner/store"
)

// JournalReader reads the tool calls a task's journal holds as started
// and not finished.
type JournalReader interface {
	UnfinishedCalls(ctx context.Context, taskID string) ([]store.JournalEntry, error)
}

// KillOrphans kills the process groups that the task's unfinished tool
// calls recorded in the journal. On Linux a crash already took each call's
// shell down (Pdeathsig), but what the shell started in the background
// lives on in its group and could still write into the workspace, and the
// commit at the end of a resumed task would pick that write up. A group is
// killed only while it is provably the same one (procgroup.KillIdentified):
// never a stranger that reused the number after a reboot.
func KillOrphans(ctx context.Context, st JournalReader, taskID string, log *slog.Logger) {
	log = quiet(log)
	calls, err := st.UnfinishedCalls(ctx, taskID)
	if err != nil {
		log.Error("runner: crash recovery: read journal", "task", taskID, "err", err)
		return
	}
	for _, c := range calls {
		if c.Process == "" {
			continue
		}
		var id procgroup.Identity
		if err := json.Unmarshal([]byte(c.Process), &id); err != nil {
			log.Error("runner: crash recovery: unreadable process record", "task", taskID, "call", c.CallID, "err", err)
			continue
		}
		killed, err := procgroup.KillIdentified(id)
		switch {
		case err != nil:
			log.Error("runner: crash recovery: kill process group", "task", taskID, "call", c.CallID, "group", id.Group, "err", err)
		case killed:
			log.Warn("runner: killed the process group a crashed tool call left", "task", taskID, "call", c.CallID, "group", id.Group)
		}
	}
}
