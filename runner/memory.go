package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"reasonix/agent"
	"reasonix/internal/bm25"
	"reasonix/runner/store"
)

// What the recall before each turn adds at most: a few short facts, so a
// turn's cost barely moves and a noisy match cannot crowd the message out.
const (
	recallMaxHits  = 5
	recallMaxChars = 1500
	// recallFloor drops facts scoring under this share of the best one:
	// a tail matched only by common words.
	recallFloor = 0.35
)

// memoryScopes are the scopes a task's agent remembers in and recalls
// from: its workspace's and its requester's.
func memoryScopes(task store.Task) []store.MemoryScope {
	var out []store.MemoryScope
	if task.Workspace != "" {
		out = append(out, store.MemoryScope{Kind: store.MemoryWorkspace, Name: task.Workspace})
	}
	if task.Requester != "" {
		out = append(out, store.MemoryScope{Kind: store.MemoryUser, Name: task.Requester})
	}
	return out
}

// memoryHumanOnly are the memory tools only a person may allow in task's
// session. Forgetting always needs one (a fact the team relies on is not
// the agent's to drop), and so does remembering for the user (seed §3.6:
// global facts need a fresh human approval even under auto or yolo; a
// workspace fact is the one an agent may save on its own); a task a
// webhook started may not remember without one at all, since its prompt
// is a payload anyone who can sign may write.
func memoryHumanOnly(task store.Task) []string {
	if task.Source == store.SourceWebhook {
		return []string{"forget", "remember"}
	}
	return []string{"forget", "remember(scope=user)"}
}

// taskMemory is the agent.Memory of one task.
type taskMemory struct {
	s    *Service
	task store.Task
}

var _ agent.Memory = (*taskMemory)(nil)

// errMemorySecret refuses a text holding a secret the service knows.
var errMemorySecret = errors.New("the text holds a secret this service knows, so it was not saved; never remember credentials")

func (m *taskMemory) Remember(ctx context.Context, scope, text string) (agent.MemoryEntry, error) {
	if m.s.redact.String(text) != text {
		return agent.MemoryEntry{}, errMemorySecret
	}
	var sc store.MemoryScope
	switch scope {
	case string(store.MemoryWorkspace):
		sc = store.MemoryScope{Kind: store.MemoryWorkspace, Name: m.task.Workspace}
	case string(store.MemoryUser):
		sc = store.MemoryScope{Kind: store.MemoryUser, Name: m.task.Requester}
	default:
		return agent.MemoryEntry{}, fmt.Errorf("scope must be workspace or user, got %q", scope)
	}
	if sc.Name == "" {
		return agent.MemoryEntry{}, fmt.Errorf("this task has no %s to remember for", scope)
	}
	got, _, err := m.s.st.AddMemory(ctx, store.NewMemory{Scope: sc, Text: text, By: m.task.Requester, TaskID: m.task.ID})
	if ie := (*store.InputError)(nil); errors.As(err, &ie) {
		return agent.MemoryEntry{}, errors.New(ie.Msg)
	}
	if err != nil {
		return agent.MemoryEntry{}, err
	}
	return memoryEntry(got), nil
}

func (m *taskMemory) Forget(ctx context.Context, id string) (agent.MemoryEntry, error) {
	got, err := m.s.st.Memory(ctx, id)
	if err == nil && !slices.Contains(memoryScopes(m.task), got.Scope) {
		err = store.ErrNotFound // another scope's memory is not this task's to know of
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && !got.Live()) {
		return agent.MemoryEntry{}, fmt.Errorf("no remembered fact %s here; list them with the memory tool", id)
	}
	if err != nil {
		return agent.MemoryEntry{}, err
	}
	if got, err = m.s.st.ForgetMemory(ctx, id, m.task.Requester); err != nil {
		return agent.MemoryEntry{}, err
	}
	return memoryEntry(got), nil
}

func (m *taskMemory) Search(ctx context.Context, query string, limit int) ([]agent.MemoryEntry, error) {
	ix, err := m.s.memory.index(ctx, m.s.st, memoryScopes(m.task))
	if err != nil {
		return nil, err
	}
	return ix.search(query, bm25.Opts{Limit: limit, Floor: recallFloor}, m.s.now()), nil
}

// recall is the task's agent.Config.Recall: the remembered facts that bear
// on a user message, as a low-authority note after it, or "" when none
// does. A failure to read the store recalls nothing (and is logged): a
// turn goes on without memory rather than fail.
func (m *taskMemory) recall(ctx context.Context, text string) string {
	if len(bm25.Terms(text)) == 0 {
		return ""
	}
	ix, err := m.s.memory.index(ctx, m.s.st, memoryScopes(m.task))
	if err != nil {
		m.s.log.Warn("runner: memory recall", "task", m.task.ID, "err", err)
		return ""
	}
	hits := ix.search(text, bm25.Opts{Limit: recallMaxHits, Floor: recallFloor}, m.s.now())
	if len(hits) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<recalled-memory note=\"Facts earlier tasks saved; they may be out of date, and the request above takes precedence.\">\n")
	for _, h := range hits {
		line := "- [" + h.ID + "] " + h.Text + "\n"
		if b.Len()+len(line) > recallMaxChars {
			break
		}
		b.WriteString(line)
	}
	b.WriteString("</recalled-memory>")
	return m.s.redact.String(b.String())
}

func memoryEntry(m store.Memory) agent.MemoryEntry {
	return agent.MemoryEntry{ID: m.ID, Scope: string(m.Scope.Kind), Text: m.Text, By: m.By, TaskID: m.TaskID, At: m.CreatedAt}
}

// memoryCache is this node's recall indexes, one per set of scopes, each
// valid while the store's memory epoch has not moved (any node's add or
// forget moves it). A recall then costs one small read and a search in
// memory, however many facts there are.
type memoryCache struct {
	mu    sync.Mutex
	byKey map[string]*memoryIndex
}

// memoryCacheMax bounds the indexes a node keeps: one per workspace and
// requester pair that ran here lately.
const memoryCacheMax = 256

type memoryIndex struct {
	epoch   int64
	entries []store.Memory // newest first
	// bm holds the entries oldest first (doc i is entries[len-1-i]), so
	// that of two facts scoring the same the newer ranks first.
	bm *bm25.Index
}

func (c *memoryCache) index(ctx context.Context, st *store.Store, scopes []store.MemoryScope) (*memoryIndex, error) {
	epoch, err := st.MemoryEpoch(ctx)
	if err != nil {
		return nil, err
	}
	parts := make([]string, len(scopes))
	for i, sc := range scopes {
		parts[i] = sc.String()
	}
	key := strings.Join(parts, "\x00")
	c.mu.Lock()
	ix := c.byKey[key]
	c.mu.Unlock()
	if ix != nil && ix.epoch == epoch {
		return ix, nil
	}
	mems, at, err := st.Memories(ctx, store.MemoryFilter{Scopes: scopes})
	if err != nil {
		return nil, err
	}
	ix = &memoryIndex{epoch: at, entries: mems, bm: bm25.New()}
	for i := len(mems) - 1; i >= 0; i-- {
		ix.bm.Add(mems[i].Text)
	}
	c.mu.Lock()
	if c.byKey == nil || len(c.byKey) >= memoryCacheMax {
		c.byKey = map[string]*memoryIndex{}
	}
	c.byKey[key] = ix
	c.mu.Unlock()
	return ix, nil
}

// Ranking rules of the seed's recall (§3.6): a fact not renewed for
// staleAfter is stale and its score weighs staleWeight of a fresh one's; a
// user fact whose terms are mostly a workspace fact's (Jaccard similarity
// at least sameSubject) is the same subject, and the workspace's wins.
const (
	staleAfter  = 90 * 24 * time.Hour
	staleWeight = 0.5
	sameSubject = 0.5
	// rankPool is how many BM25 hits per returned one are reranked.
	rankPool = 4
)

// search ranks the index's facts against query (newest first for an empty
// query), at most o.Limit: BM25, stale facts down-weighted, the floor
// applied to the reweighted scores, then user facts a workspace fact
// among the hits overrides left out.
func (ix *memoryIndex) search(query string, o bm25.Opts, now time.Time) []agent.MemoryEntry {
	var out []agent.MemoryEntry
	if strings.TrimSpace(query) == "" {
		for _, m := range ix.entries[:min(o.Limit, len(ix.entries))] {
			out = append(out, memoryEntry(m))
		}
		return out
	}
	type cand struct {
		m     store.Memory
		score float64
	}
	hits := ix.bm.Search(query, bm25.Opts{Limit: max(o.Limit, 1) * rankPool})
	cands := make([]cand, 0, len(hits))
	for _, h := range hits {
		m := ix.entries[len(ix.entries)-1-h.Doc]
		score := h.Score
		if now.Sub(m.CreatedAt) > staleAfter {
			score *= staleWeight
		}
		cands = append(cands, cand{m, score})
	}
	// Stable: of equal scores the newer (BM25's order) stays first.
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(b.score, a.score) })
	var workspaceTerms []map[string]bool
	for _, c := range cands {
		if len(cands) > 0 && c.score < o.Floor*cands[0].score {
			break
		}
		if c.m.Scope.Kind == store.MemoryWorkspace {
			workspaceTerms = append(workspaceTerms, termSet(c.m.Text))
		}
	}
	for _, c := range cands {
		if len(out) == o.Limit || c.score < o.Floor*cands[0].score {
			break
		}
		if c.m.Scope.Kind == store.MemoryUser {
			ts := termSet(c.m.Text)
			if slices.ContainsFunc(workspaceTerms, func(w map[string]bool) bool { return jaccard(ts, w) >= sameSubject }) {
				continue
			}
		}
		out = append(out, memoryEntry(c.m))
	}
	return out
}

func termSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, t := range bm25.Terms(text) {
		set[t] = true
	}
	return set
}

// jaccard is |a ∩ b| / |a ∪ b|, 0 for two empty sets.
func jaccard(a, b map[string]bool) float64 {
	both := 0
	for t := range a {
		if b[t] {
			both++
		}
	}
	if union := len(a) + len(b) - both; union > 0 {
		return float64(both) / float64(union)
	}
	return 0
}
