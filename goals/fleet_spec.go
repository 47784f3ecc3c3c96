package goals

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"reasonix/agent"
)

// Fleet size limits (seed §3.10).
const (
	MinFleetItems = 2
	MaxFleetItems = 64
	maxIDLen      = 64
	maxPrompt     = 64 << 10
)

// ErrPreflight marks a fleet that was refused before anything started.
var ErrPreflight = errors.New("goals: fleet preflight")

// FleetItem is one task of a fleet as the model sends it.
type FleetItem struct {
	// ID names the item; empty means its 1-based position.
	ID        string   `json:"id,omitempty"`
	Prompt    string   `json:"prompt,omitempty"`
	DependsOn []string `json:"depends_on,omitempty"`
	Profile   string   `json:"profile,omitempty"`
	// WritePaths is the item's write claim, workspace-relative. Empty on a
	// writer claims the whole workspace.
	WritePaths []string `json:"write_paths,omitempty"`
	Model      string   `json:"model,omitempty"`
	// Effort is the item's reasoning effort (one of agent's Effort*
	// levels); "" = the configured default.
	Effort string `json:"effort,omitempty"`
	// AdoptRef stands the item down to an already finished child's answer;
	// no other field but ID and DependsOn may be set with it.
	AdoptRef string `json:"adopt_ref,omitempty"`
	// ContinueFrom resumes a partial or failed child of this lineage: the
	// new child opens with that child's transcript, its profile, model and
	// write claim, and Prompt as the next user turn. Profile, Model and
	// WritePaths must be empty with it.
	ContinueFrom string `json:"continue_from,omitempty"`
	// ForkFrom starts a new child from a copy of any finished child's
	// transcript (same profile), with Prompt as the next user turn and its
	// own WritePaths (the source's when empty). Profile must be empty.
	ForkFrom string `json:"fork_from,omitempty"`
}

// FleetSpec is the fleet tool's arguments.
type FleetSpec struct {
	Items []FleetItem `json:"items"`
	// FailFast stops starting new items after the first failure; running
	// items finish.
	FailFast bool `json:"fail_fast,omitempty"`
}

// Graph is a fleet that passed preflight: ids are unique and filled in,
// every dependency names an item, and there is no cycle. It is immutable.
type Graph struct {
	Items    []FleetItem
	FailFast bool
	deps     [][]int // item -> its dependencies, in depends_on order
	next     [][]int // item -> items that depend on it
	order    []int   // a topological order
}

// Deps returns the indexes of item i's dependencies in depends_on order.
func (g *Graph) Deps(i int) []int { return g.deps[i] }

// ParseFleet decodes the fleet tool's JSON arguments, refusing unknown
// fields, and preflights the graph. Every error wraps ErrPreflight.
func ParseFleet(raw []byte) (*Graph, error) {
	var spec FleetSpec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("%w: invalid arguments: %v", ErrPreflight, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: invalid arguments: trailing data after the object", ErrPreflight)
	}
	return Preflight(spec)
}

// Preflight checks a fleet of MinFleetItems to MaxFleetItems items: ids
// (defaulting to positions) must be unique; depends_on may name only other
// declared ids, each once; the graph must be acyclic; adopt_ref excludes
// every execution field; write paths must stay inside the workspace. Every
// error wraps ErrPreflight and names the items involved.
func Preflight(spec FleetSpec) (*Graph, error) {
	if n := len(spec.Items); n < MinFleetItems || n > MaxFleetItems {
		return nil, fmt.Errorf("%w: a fleet has %d to %d items, got %d", ErrPreflight, MinFleetItems, MaxFleetItems, n)
	}
	return preflight(spec)
}

// preflight is Preflight without the size limits (task runs one item).
func preflight(spec FleetSpec) (*Graph, error) {
	n := len(spec.Items)
	g := &Graph{Items: make([]FleetItem, n), FailFast: spec.FailFast, deps: make([][]int, n), next: make([][]int, n)}
	index := make(map[string]int, n)
	for i, it := range spec.Items {
		if strings.TrimSpace(it.ID) == "" {
			it.ID = strconv.Itoa(i + 1)
		}
		if err := checkItem(i, &it); err != nil {
			return nil, err
		}
		if j, dup := index[it.ID]; dup {
			return nil, fmt.Errorf("%w: duplicate id %q (items %d and %d)", ErrPreflight, it.ID, j+1, i+1)
		}
		index[it.ID] = i
		g.Items[i] = it
	}
	for i, it := range g.Items {
		seen := map[string]bool{}
		for _, d := range it.DependsOn {
			j, ok := index[d]
			switch {
			case d == it.ID:
				return nil, fmt.Errorf("%w: item %q depends on itself", ErrPreflight, it.ID)
			case !ok:
				return nil, fmt.Errorf("%w: item %q depends on %q, which no item declares", ErrPreflight, it.ID, d)
			case seen[d]:
				return nil, fmt.Errorf("%w: item %q lists dependency %q twice", ErrPreflight, it.ID, d)
			}
			seen[d] = true
			g.deps[i] = append(g.deps[i], j)
			g.next[j] = append(g.next[j], i)
		}
	}
	if err := g.sort(); err != nil {
		return nil, err
	}
	return g, nil
}

func checkItem(i int, it *FleetItem) error {
	where := fmt.Sprintf("item %d (%q)", i+1, it.ID)
	if len(it.ID) > maxIDLen || strings.ContainsAny(it.ID, "\x00\n\r\"<>") {
		return fmt.Errorf("%w: %s: an id is at most %d bytes without quotes, angle brackets or line breaks", ErrPreflight, where, maxIDLen)
	}
	if it.AdoptRef != "" {
		if it.Prompt != "" || it.Profile != "" || it.Model != "" || it.Effort != "" || len(it.WritePaths) > 0 || it.ContinueFrom != "" || it.ForkFrom != "" {
			return fmt.Errorf("%w: %s adopts %q, so prompt, profile, model, effort, write_paths, continue_from and fork_from must be empty", ErrPreflight, where, it.AdoptRef)
		}
		return nil
	}
	switch {
	case it.ContinueFrom != "" && it.ForkFrom != "":
		return fmt.Errorf("%w: %s: continue_from and fork_from exclude each other", ErrPreflight, where)
	case it.ContinueFrom != "" && (it.Profile != "" || it.Model != "" || len(it.WritePaths) > 0):
		return fmt.Errorf("%w: %s continues %q with its profile, model and write claim, so profile, model and write_paths must be empty", ErrPreflight, where, it.ContinueFrom)
	case it.ForkFrom != "" && it.Profile != "":
		return fmt.Errorf("%w: %s forks %q, whose transcript was made under its own profile, so profile must be empty", ErrPreflight, where, it.ForkFrom)
	}
	switch it.Effort {
	case "", agent.EffortMinimal, agent.EffortLow, agent.EffortMedium, agent.EffortHigh, agent.EffortMax:
	default:
		return fmt.Errorf("%w: %s: effort %q is not one of minimal, low, medium, high, max", ErrPreflight, where, it.Effort)
	}
	if strings.TrimSpace(it.Prompt) == "" {
		return fmt.Errorf("%w: %s has no prompt", ErrPreflight, where)
	}
	if len(it.Prompt) > maxPrompt {
		return fmt.Errorf("%w: %s: the prompt is %d bytes; keep it under %d", ErrPreflight, where, len(it.Prompt), maxPrompt)
	}
	for k, p := range it.WritePaths {
		c := filepath.Clean(filepath.FromSlash(p))
		if strings.TrimSpace(p) == "" || filepath.IsAbs(c) || c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)) || strings.ContainsRune(p, 0) {
			return fmt.Errorf("%w: %s: write_paths[%d] %q must be a path inside the workspace, relative to it", ErrPreflight, where, k, p)
		}
		it.WritePaths[k] = c
	}
	return nil
}

// sort computes a topological order (Kahn) and, when there is none,
// reports one cycle as a path.
func (g *Graph) sort() error {
	n := len(g.Items)
	indeg := make([]int, n)
	for i := range g.Items {
		indeg[i] = len(g.deps[i])
	}
	queue := make([]int, 0, n)
	for i := range indeg {
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	for k := 0; k < len(queue); k++ {
		for _, j := range g.next[queue[k]] {
			if indeg[j]--; indeg[j] == 0 {
				queue = append(queue, j)
			}
		}
	}
	if len(queue) == n {
		g.order = queue
		return nil
	}
	// Every node left has a dependency left, so walking dependencies from
	// any of them must revisit a node: that loop is the cycle.
	start := -1
	for i := range indeg {
		if indeg[i] > 0 {
			start = i
			break
		}
	}
	pos := map[int]int{}
	var path []int
	for cur := start; ; {
		if p, ok := pos[cur]; ok {
			path = path[p:]
			break
		}
		pos[cur] = len(path)
		path = append(path, cur)
		for _, d := range g.deps[cur] {
			if indeg[d] > 0 {
				cur = d
				break
			}
		}
	}
	names := make([]string, 0, len(path)+1)
	for k := len(path) - 1; k >= 0; k-- {
		names = append(names, strconv.Quote(g.Items[path[k]].ID))
	}
	names = append(names, names[0])
	return fmt.Errorf("%w: the dependencies form a cycle: %s", ErrPreflight, strings.Join(names, " -> "))
}
