package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"reasonix/runner/store"
)

// A scratch task (no workspace) has no branch to checkpoint, so when a
// drain hands it to another node its directory travels through the store:
// the stopping node packs it into a gzipped tar (at most MoveLimit bytes),
// and the node that runs the task next unpacks it before the session
// starts and deletes it. A directory too large to pack stays where it is;
// the task continues elsewhere without it and its events say so. A node
// that dies takes its scratch directories with it (nothing packs them);
// the node taking over says so too.
//
// A scratch task that stops without being handed over (it finished, was
// interrupted, or waits for an approval) keeps its directory on the node
// that ran it. When another node is to run it next (a reply continues it,
// a resume, a decided approval), that node asks the holder for the
// directory through the store and waits (Await): the holder packs it into
// the store as a drain does (Move), answers, and wakes the task's job, and
// the next run unpacks it (Restore). A holder that is not running is not
// waited for, nor one silent for Wait: the task then continues without
// the files, and its events say so.

// DefaultScratchMoveLimit bounds a packed scratch directory.
const DefaultScratchMoveLimit = 16 << 20

// ScratchStore is the part of the store that carries scratch directories
// and the requests for them between nodes.
type ScratchStore interface {
	Members
	Task(ctx context.Context, id string) (store.Task, error)
	Wake(ctx context.Context, taskID string) error
	SaveScratch(ctx context.Context, taskID, node string, archive []byte) error
	Scratch(ctx context.Context, taskID string) (store.ScratchArchive, error)
	DeleteScratch(ctx context.Context, taskID string) error
	RequestScratch(ctx context.Context, taskID, node string) (store.ScratchRequest, error)
	ScratchRequestOf(ctx context.Context, taskID string) (store.ScratchRequest, error)
	ScratchRequests(ctx context.Context, node string) ([]string, error)
	ScratchAsked(node string) (<-chan struct{}, func())
	AnswerScratchRequest(ctx context.Context, taskID, node string) error
	DropScratchRequest(ctx context.Context, taskID string) error
}

// ScratchConfig configures a Scratch; every field but Dir, Now and Log is
// required.
type ScratchConfig struct {
	Store ScratchStore
	// Node is this node's id.
	Node string
	// MoveLimit bounds a packed directory.
	MoveLimit int64
	// Wait bounds how long a node waits for the holder's answer.
	Wait time.Duration
	// Interval is how often this node looks for requests addressed to it
	// while other nodes are alive (see Others).
	Interval time.Duration
	// StaleAfter is when a silent node counts as dead (see List).
	StaleAfter time.Duration
	Events     Events
	// Runs reports whether task id runs on this node now.
	Runs func(id string) bool
	// Dir returns task id's scratch directory on this node; nil, or "",
	// when the workspaces cannot say (the task then continues without it).
	Dir func(id string) string
	// Claiming is held while this node claims a scratch task whose
	// directory is here; a hand-over waits for it, so the claim and the
	// hand-over never both win.
	Claiming *sync.Mutex
	Now      func() time.Time // nil is time.Now
	Log      *slog.Logger
}

// Scratch moves scratch directories between nodes with their tasks.
type Scratch struct {
	cfg    ScratchConfig
	others atomic.Int64  // other live nodes at the last heartbeat
	joined chan struct{} // others went from none to some (capacity 1)
}

// NewScratch builds a Scratch.
func NewScratch(cfg ScratchConfig) *Scratch {
	cfg.Now, cfg.Log = now(cfg.Now), quiet(cfg.Log)
	return &Scratch{cfg: cfg, joined: make(chan struct{}, 1)}
}

// Others tells the answerer how many other nodes are alive; the
// heartbeat calls it after each beat (HeartbeatConfig.Others). Until the
// first call the node counts as not alone.
func (s *Scratch) Others(n int) {
	if s.others.Swap(int64(n)+1) == 1 && n > 0 {
		select {
		case s.joined <- struct{}{}:
		default:
		}
	}
}

// Alone reports whether the last heartbeat found no other node alive.
func (s *Scratch) Alone() bool { return s.others.Load() == 1 }

// Move packs the scratch directory dir of task id, being handed over, into
// the store and, once it is there, removes the local copy (so if the task
// comes back to this node, the newer archive is what it finds). It never
// stops the hand-over: a directory it cannot move is reported in the
// task's events, and an older archive is dropped so that nobody unpacks
// stale files.
func (s *Scratch) Move(ctx context.Context, id, dir string) {
	st, node, limit := s.cfg.Store, s.cfg.Node, s.cfg.MoveLimit
	archive, files, err := packScratch(dir, limit)
	if err == nil {
		err = st.SaveScratch(ctx, id, node, archive)
	}
	if err != nil {
		reason := "its scratch directory could not be packed or saved; the files stay on node " + node
		if errors.Is(err, errScratchTooLarge) {
			reason = fmt.Sprintf("its scratch directory is larger than %d bytes packed; the files stay on node %s", limit, node)
		}
		s.cfg.Log.Warn("runner: scratch directory not moved", "task", id, "err", err)
		if derr := st.DeleteScratch(ctx, id); derr != nil {
			s.cfg.Log.Error("runner: dropping an older scratch archive", "task", id, "err", derr)
		}
		s.cfg.Events.Emit(ctx, id, "scratch_not_moved", map[string]any{"node": node, "reason": reason, "limit_bytes": limit})
		// The node that runs the task next need not ask (Await).
		if err := st.AnswerScratchRequest(ctx, id, node); err != nil {
			s.cfg.Log.Warn("runner: recording a scratch directory not moved", "task", id, "err", err)
		}
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		s.cfg.Log.Warn("runner: removing a moved scratch directory", "task", id, "err", err)
	}
	s.cfg.Events.Emit(ctx, id, "scratch_moved", map[string]any{"node": node, "files": files, "bytes": len(archive)})
}

// Restore unpacks the scratch archive another node left for task into its
// scratch directory dir and deletes it. Only a task that ran before can
// have one. A failure is reported in the events and the run goes on with
// what it has.
func (s *Scratch) Restore(ctx context.Context, task store.Task, dir string) {
	if task.Attempt < 2 {
		return
	}
	st := s.cfg.Store
	a, err := st.Scratch(ctx, task.ID)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err == nil {
		err = unpackScratch(a.Archive, dir)
	}
	if err != nil {
		s.cfg.Log.Error("runner: restoring the scratch directory", "task", task.ID, "err", err)
		s.cfg.Events.Emit(ctx, task.ID, "scratch_not_moved", map[string]any{"node": s.cfg.Node,
			"reason": "the scratch directory handed over could not be restored here; the task continues with what its directory holds"})
		return
	}
	if err := st.DeleteScratch(ctx, task.ID); err != nil {
		s.cfg.Log.Warn("runner: deleting a restored scratch archive", "task", task.ID, "err", err)
	}
	s.cfg.Events.Emit(ctx, task.ID, "scratch_restored", map[string]any{"node": s.cfg.Node, "from": a.Node, "bytes": len(a.Archive)})
}

// Await runs before this node claims task. It returns a snooze while the
// node holding the task's scratch directory, alive, has not answered the
// request for it, and nil to go ahead.
func (s *Scratch) Await(ctx context.Context, task store.Task) error {
	st, owner := s.cfg.Store, task.LeaseOwner
	if task.Workspace != "" || task.Attempt == 0 || owner == "" {
		return nil // never ran: there is no directory yet
	}
	if owner == s.cfg.Node {
		// The directory is here, or in an archive this node left: an
		// answer recorded for an earlier move is stale from now on.
		s.dropRequest(ctx, task.ID)
		return nil
	}
	if _, err := st.Scratch(ctx, task.ID); err == nil {
		return nil // handed over already: Restore takes it
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("runner: look for a scratch archive: %w", err)
	}
	req, err := st.ScratchRequestOf(ctx, task.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("runner: read a scratch request: %w", err)
	}
	if err == nil && req.Node == owner && !req.AnsweredAt.IsZero() {
		// Answered (the holder's events say how): nothing more will come.
		s.dropRequest(ctx, task.ID)
		return nil
	}
	if gone := s.nodeGone(ctx, owner); gone != "" {
		s.dropRequest(ctx, task.ID)
		s.cfg.Events.Emit(ctx, task.ID, "scratch_not_moved", map[string]any{"node": owner,
			"reason": "node " + owner + " " + gone + " with the task's scratch directory; the task continues without those files"})
		return nil
	}
	if err == nil && req.Node != owner {
		s.dropRequest(ctx, task.ID) // asked of a node that held it before
	}
	if req, err = st.RequestScratch(ctx, task.ID, owner); err != nil {
		return fmt.Errorf("runner: ask for a scratch directory: %w", err)
	}
	if !req.AnsweredAt.IsZero() {
		s.dropRequest(ctx, task.ID)
		return nil
	}
	if waited := s.cfg.Now().Sub(req.RequestedAt); waited < s.cfg.Wait {
		return store.Snooze(s.cfg.Wait - waited) // the holder's answer wakes the job
	}
	s.dropRequest(ctx, task.ID)
	s.cfg.Events.Emit(ctx, task.ID, "scratch_not_moved", map[string]any{"node": owner,
		"reason": fmt.Sprintf("node %s did not hand over the task's scratch directory within %s; the task continues without those files", owner, s.cfg.Wait)})
	return nil
}

// nodeGone says why node cannot hand anything over ("stopped", "stopped
// responding"), or "" while it runs (or drains) with a fresh heartbeat.
// Not knowing counts as running: the wait is bounded, going on without
// the files cannot be undone.
func (s *Scratch) nodeGone(ctx context.Context, node string) string {
	nodes, err := List(ctx, s.cfg.Store, s.cfg.StaleAfter, s.cfg.Now())
	if err != nil {
		return ""
	}
	for _, n := range nodes {
		switch {
		case n.ID != node:
		case n.State == store.NodeStopped:
			return "stopped"
		case n.Stale:
			return "stopped responding"
		default:
			return ""
		}
	}
	return "stopped responding" // its row is gone, or it never had one
}

func (s *Scratch) dropRequest(ctx context.Context, id string) {
	if err := s.cfg.Store.DropScratchRequest(context.WithoutCancel(ctx), id); err != nil {
		s.cfg.Log.Warn("runner: dropping a scratch request", "task", id, "err", err)
	}
}

// Answer hands over the scratch directories other nodes asked this node
// for, until ctx ends. It looks once at start (requests left from before
// a restart), at once when this process asks (store.ScratchAsked: every
// request on SQLite, whose one process holds all nodes), and every
// Interval while another node is alive. A node alone, as every SQLite
// node is, never reads the store for nothing: an idle service stays idle.
// A node that joins is noticed at this node's next heartbeat, well within
// the ScratchWait its requests are given.
func (s *Scratch) Answer(ctx context.Context) {
	asked, unsubscribe := s.cfg.Store.ScratchAsked(s.cfg.Node)
	defer unsubscribe()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-asked:
		case <-s.joined:
		case <-t.C:
		}
		ids, err := s.cfg.Store.ScratchRequests(ctx, s.cfg.Node)
		if err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("runner: reading scratch requests", "err", err)
		}
		for _, id := range ids {
			s.handOver(ctx, id)
		}
		// The timer runs only while someone else may ask; a signal that
		// arrives meanwhile restarts it.
		t.Stop()
		if !s.Alone() {
			t.Reset(s.cfg.Interval)
		}
	}
}

// handOver packs task id's scratch directory into the store for the node
// that asked for it, unless the task runs (here or elsewhere) or ended
// meanwhile, then answers and wakes the task's job.
func (s *Scratch) handOver(ctx context.Context, id string) {
	s.cfg.Claiming.Lock()
	defer s.cfg.Claiming.Unlock()
	st, node := s.cfg.Store, s.cfg.Node
	t, err := st.Task(ctx, id)
	if err != nil {
		s.cfg.Log.Warn("runner: reading a task whose scratch directory was asked for", "task", id, "err", err)
		return
	}
	waiting := t.State == store.StateQueued || t.State == store.StateWaitingApproval
	if waiting && t.LeaseOwner == node && !s.cfg.Runs(id) {
		dir := ""
		if s.cfg.Dir != nil {
			dir = s.cfg.Dir(id)
		}
		if fi, err := os.Stat(dir); dir != "" && err == nil && fi.IsDir() {
			s.Move(ctx, id, dir)
		} else {
			s.cfg.Events.Emit(ctx, id, "scratch_not_moved", map[string]any{"node": node,
				"reason": "node " + node + " no longer has the task's scratch directory; the task continues without it"})
		}
	}
	if err := st.AnswerScratchRequest(ctx, id, node); err != nil {
		s.cfg.Log.Warn("runner: answering a scratch request", "task", id, "err", err)
		return
	}
	if err := st.Wake(ctx, id); err != nil {
		s.cfg.Log.Warn("runner: waking a task after handing over its scratch directory", "task", id, "err", err)
	}
}
