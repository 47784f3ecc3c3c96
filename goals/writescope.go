package goals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"reasonix/agent"
)

// ErrOutsideClaim is the refusal of a write outside a child's write_paths.
var ErrOutsideClaim = errors.New("outside the write claim")

// resolve turns p (absolute, or relative to the workspace) into its
// symlink-free absolute form: through the configured PathGuard when there
// is one, else by resolving the deepest existing ancestor, so a path about
// to be created resolves too.
func (h *Host) resolve(p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(h.cfg.Workdir, p)
	}
	if h.cfg.Paths != nil {
		return h.cfg.Paths.WritePath(p)
	}
	return resolveExisting(filepath.Clean(p))
}

func resolveExisting(p string) (string, error) {
	rest := ""
	cur := p
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether p is root or lies under it.
func within(p, root string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// claimsOverlap reports whether two resolved claims share any path; an
// empty claim is the whole workspace.
func claimsOverlap(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	for _, x := range a {
		for _, y := range b {
			if within(x, y) || within(y, x) {
				return true
			}
		}
	}
	return false
}

// bindTools builds a child's registry from the factory's: with an explicit
// write claim, path-aware writers are wrapped to refuse paths outside it,
// bash stays only when the factory bound it to the claim (ShellBound), and writers that cannot be
// path-scoped are dropped. Writers also get complete_subtask.
func (h *Host) bindTools(base *agent.ToolRegistry, run *childRun) (*agent.ToolRegistry, error) {
	reg := agent.NewToolRegistry()
	if base == nil {
		base = agent.NewToolRegistry()
	}
	scoped := run.spec.Writer && len(run.claim) > 0
	for _, name := range base.Names() {
		t, _ := base.Get(name)
		switch {
		case name == toolCompleteSubtask, IsDelegationTool(name), name == "read_subagent_result", name == "list_subagents":
			continue // the host's own contract and delegation tools replace any other
		case agent.IsReadOnly(t):
		case run.readOnly:
			continue // below a read-only child nothing writes
		case run.spec.Writer && h.cfg.PathArgs[name] != nil:
			// Scoped even without explicit paths: the whole-workspace claim
			// still reports writes that leave the workspace.
			t = &scopedWriter{Tool: t, keys: h.cfg.PathArgs[name], run: run, host: h}
		case !scoped:
		case name == "bash":
			if !h.cfg.ShellBound {
				continue
			}
		default:
			continue
		}
		if err := reg.Add(t); err != nil {
			return nil, fmt.Errorf("goals: child %s: %w", run.spec.ID, err)
		}
	}
	if run.spec.Writer {
		if err := reg.Add(&completeSubtask{run: run}); err != nil {
			return nil, fmt.Errorf("goals: child %s: %w", run.spec.ID, err)
		}
	}
	return reg, nil
}

// scopedWriter refuses a call whose path arguments leave the claim. Paths
// are compared after symlink resolution, so neither ".." nor a symlink
// inside the claim can carry a write out of it.
type scopedWriter struct {
	agent.Tool
	keys []string
	run  *childRun
	host *Host
}

func (w *scopedWriter) Execute(ctx context.Context, args json.RawMessage) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return w.Tool.Execute(ctx, args) // the tool reports malformed arguments itself
	}
	for _, k := range w.keys {
		var p string
		if json.Unmarshal(m[k], &p) != nil || p == "" {
			continue
		}
		r, err := w.host.resolve(p)
		if err == nil && !w.run.inClaim(r, w.host.workdir) {
			err = fmt.Errorf("%q %w (%s)", p, ErrOutsideClaim, strings.Join(w.run.spec.WritePaths, ", "))
		}
		if err != nil {
			w.host.violations.Add(1)
			w.run.addViolation(p)
			return "", fmt.Errorf("%s: refused: %w; this sub-agent may only write inside its write_paths", w.Name(), err)
		}
	}
	return w.Tool.Execute(ctx, args)
}

// relPath shows an absolute path relative to the workspace when inside it.
func (h *Host) relPath(abs string) string {
	if rel, err := filepath.Rel(h.workdir, abs); err == nil && within(abs, h.workdir) {
		return filepath.ToSlash(rel)
	}
	return abs
}
