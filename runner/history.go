package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"reasonix/agent"
	"reasonix/internal/bm25"
	"reasonix/runner/store"
)

// historyRecheck bounds the unfinished tasks one search re-reads.
const historyRecheck = 50

// historyFloor drops past tasks scoring under this share of the best.
const historyFloor = 0.3

// taskHistory is the agent.History of one task: the past tasks of its
// workspace its requester may see (historyVisible).
type taskHistory struct {
	s    *Service
	task store.Task
}

var _ agent.History = (*taskHistory)(nil)

// historyVisible reports whether the agent of task may read past task t:
// one of the same workspace (or, for a scratch task, a scratch task) that
// its requester asked for, or that a schedule or a webhook started there
// (the team's work, not another person's); never the task itself.
func historyVisible(task, t store.Task) bool {
	if t.ID == task.ID || t.Workspace != task.Workspace {
		return false
	}
	return t.Requester == task.Requester || strings.HasPrefix(t.Requester, "schedule:") || strings.HasPrefix(t.Requester, "webhook:")
}

func sessionInfo(t store.Task) agent.SessionInfo {
	return agent.SessionInfo{ID: t.ID, State: string(t.State), Requester: t.Requester, Prompt: t.Prompt, Created: t.CreatedAt}
}

// filter is the store filter of the tasks history may index for h.task.
func (h *taskHistory) filter() store.TaskFilter {
	if h.task.Workspace == "" {
		return store.TaskFilter{Requester: h.task.Requester}
	}
	return store.TaskFilter{Workspace: h.task.Workspace}
}

func (h *taskHistory) Sessions(ctx context.Context, before string, limit int) ([]agent.SessionInfo, error) {
	f := h.filter()
	f.Cursor = before
	var out []agent.SessionInfo
	for len(out) < limit {
		f.Limit = 200
		page, err := h.s.st.ListTasks(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Tasks {
			if len(out) < limit && historyVisible(h.task, t) {
				out = append(out, sessionInfo(t))
			}
		}
		if page.Next == "" {
			break
		}
		f.Cursor = page.Next
	}
	return out, nil
}

func (h *taskHistory) Session(ctx context.Context, id string, offset, limit int) (agent.SessionText, error) {
	t, err := h.s.st.Task(ctx, id)
	if err == nil && !historyVisible(h.task, t) {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		return agent.SessionText{}, fmt.Errorf("no past task %s this task may read; list them with list_sessions", id)
	}
	if err != nil {
		return agent.SessionText{}, err
	}
	msgs, err := h.s.st.Messages(ctx, id)
	if err != nil {
		return agent.SessionText{}, err
	}
	lo, hi := min(offset, len(msgs)), min(offset+limit, len(msgs))
	window := slices.Clone(msgs[lo:hi])
	for i := range window {
		window[i].Content = h.s.redact.String(window[i].Content)
	}
	return agent.SessionText{Info: sessionInfo(t), Messages: window, Total: len(msgs)}, nil
}

func (h *taskHistory) Search(ctx context.Context, query string, limit int) ([]agent.HistoryHit, error) {
	f := h.filter()
	key := f.Workspace + "\x00" + f.Requester
	ix := h.s.history.get(key)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := ix.refresh(ctx, h.s.st, f); err != nil {
		return nil, err
	}
	hits := ix.bm.Search(query, bm25.Opts{Limit: limit, Floor: historyFloor, Keep: func(d int) bool {
		doc := ix.docs[d]
		return ix.live[doc.task.ID] == d && historyVisible(h.task, doc.task)
	}})
	terms := bm25.Terms(query)
	out := make([]agent.HistoryHit, 0, len(hits))
	for _, hit := range hits {
		doc := ix.docs[hit.Doc]
		out = append(out, agent.HistoryHit{Info: sessionInfo(doc.task), Excerpt: h.s.redact.String(excerpt(doc.text, terms)), Score: hit.Score})
	}
	return out, nil
}

// excerpt is the line of text holding the most of terms.
func excerpt(text string, terms []string) string {
	best, bestN := "", -1
	for _, line := range strings.Split(text, "\n") {
		words := bm25.Terms(line)
		n := 0
		for _, t := range terms {
			if slices.Contains(words, t) {
				n++
			}
		}
		if n > bestN {
			best, bestN = line, n
		}
	}
	return best
}

// historyCache is this node's history indexes, one per workspace (or
// scratch requester). An index grows by the tasks created since it was
// last brought up to date, and re-reads the tasks that were not finished
// when indexed, so a search reads only what changed.
type historyCache struct {
	mu    sync.Mutex
	byKey map[string]*historyIndex
}

const historyCacheMax = 64

func (c *historyCache) get(key string) *historyIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ix := c.byKey[key]; ix != nil {
		return ix
	}
	if c.byKey == nil || len(c.byKey) >= historyCacheMax {
		c.byKey = map[string]*historyIndex{}
	}
	ix := &historyIndex{bm: bm25.New(), live: map[string]int{}}
	c.byKey[key] = ix
	return ix
}

type historyIndex struct {
	mu      sync.Mutex
	newest  string // the newest task id indexed
	docs    []historyDoc
	bm      *bm25.Index
	live    map[string]int // task id → its current doc
	pending []string       // tasks not finished when indexed
}

type historyDoc struct {
	task store.Task
	text string
}

// refresh indexes the tasks created since the last refresh and the final
// version of those that have finished since. The caller holds ix.mu.
func (ix *historyIndex) refresh(ctx context.Context, st *store.Store, f store.TaskFilter) error {
	f.After, f.Limit = ix.newest, 500
	var fresh []store.Task
	for {
		page, err := st.ListTasks(ctx, f)
		if err != nil {
			return err
		}
		fresh = append(fresh, page.Tasks...)
		if page.Next == "" {
			break
		}
		f.Cursor = page.Next
	}
	// Re-read at most historyRecheck unfinished tasks per search, oldest
	// first: a backlog of queued tasks costs later searches, not this one.
	var still []string
	for i, id := range ix.pending {
		if i >= historyRecheck {
			still = append(still, ix.pending[i:]...)
			break
		}
		t, err := st.Task(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if t.State.Terminal() {
			ix.add(t)
		} else {
			still = append(still, id)
		}
	}
	ix.pending = still
	for i := len(fresh) - 1; i >= 0; i-- { // oldest first
		t := fresh[i]
		ix.add(t)
		if !t.State.Terminal() {
			ix.pending = append(ix.pending, t.ID)
		}
		ix.newest = t.ID
	}
	return nil
}

func (ix *historyIndex) add(t store.Task) {
	text := t.Prompt
	if r := t.Result; r != nil {
		text += "\n" + r.Summary
		if r.FinalAnswer != r.Summary {
			text += "\n" + r.FinalAnswer
		}
	}
	ix.live[t.ID] = ix.bm.Add(text)
	ix.docs = append(ix.docs, historyDoc{task: t, text: text})
}
