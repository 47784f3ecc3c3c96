package codeindex

import (
	"cmp"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Symbol is one declaration.
type Symbol struct {
	Name      string
	Kind      string // func, method, type, struct, interface, class, enum, trait, const, var, module, macro, heading
	Container string // the receiver, class or module it belongs to; empty at the top level
	Path      string // slash-separated, relative to the index's root
	Line      int    // 1-based
	Text      string // the declaration's line, trimmed and bounded

	lname, lqual string // Name and Qualified in lower case, for queries
}

// Qualified is Container.Name, or Name at the top level.
func (s Symbol) Qualified() string {
	if s.Container == "" {
		return s.Name
	}
	return s.Container + "." + s.Name
}

const (
	// maxFileSize leaves out generated and data files too large to be
	// code worth navigating by name.
	maxFileSize = 1 << 20
	// maxText bounds a symbol's line.
	maxText = 160
	// cacheSize is how many trees For keeps indexes of.
	cacheSize = 8
)

// skipDirs are directories never indexed: VCS state and dependency trees.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".hg": true, ".svn": true, "__pycache__": true, "target": true, ".venv": true}

// Index is the symbol index of one tree. It is safe for concurrent use.
type Index struct {
	root  string
	mu    sync.Mutex
	files map[string]*fileSyms // by relative path
}

type fileSyms struct {
	size, mtime int64
	syms        []Symbol
}

// New returns an empty index of the tree at root (absolute).
func New(root string) *Index { return &Index{root: root, files: map[string]*fileSyms{}} }

var (
	cacheMu sync.Mutex
	cache   []*Index // most recently used last
)

// For returns the shared index of the tree at root, keeping the indexes of
// the few most recently used trees.
func For(root string) *Index {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	for i, ix := range cache {
		if ix.root == root {
			cache = append(slices.Delete(cache, i, i+1), ix)
			return ix
		}
	}
	ix := New(root)
	if len(cache) == cacheSize {
		cache = slices.Delete(cache, 0, 1)
	}
	cache = append(cache, ix)
	return ix
}

// Refresh brings the index up to date with the tree: files added, changed
// (by size or modification time) or removed since the last refresh.
func (ix *Index) Refresh(ctx context.Context) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.refresh(ctx)
}

func (ix *Index) refresh(ctx context.Context) error {
	type entry struct {
		rel, abs string
		d        fs.DirEntry
		lang     *language
		out      *fileSyms
	}
	var found []*entry
	err := filepath.WalkDir(ix.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == ix.root {
				return err
			}
			return nil
		}
		if d.IsDir() {
			if p != ix.root && skipDirs[d.Name()] {
				return fs.SkipDir
			}
			return ctx.Err()
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if lang := languageOf(d.Name()); lang != nil {
			rel, _ := filepath.Rel(ix.root, p)
			found = append(found, &entry{rel: filepath.ToSlash(rel), abs: p, d: d, lang: lang})
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Stat every file and scan the changed ones in parallel: the stats are
	// a warm query's cost, the parsing a cold index's.
	var wg sync.WaitGroup
	work := make(chan *entry, 64)
	for range min(runtime.GOMAXPROCS(0), max(1, len(found))) {
		wg.Go(func() {
			for e := range work {
				info, err := e.d.Info()
				if err != nil || info.Size() > maxFileSize {
					continue
				}
				size, mtime := info.Size(), info.ModTime().UnixNano()
				if old := ix.files[e.rel]; old != nil && old.size == size && old.mtime == mtime {
					e.out = old
					continue
				}
				data, err := os.ReadFile(e.abs)
				if err != nil {
					continue
				}
				syms := e.lang.scan(e.rel, data)
				for i := range syms {
					syms[i].lname, syms[i].lqual = strings.ToLower(syms[i].Name), strings.ToLower(syms[i].Qualified())
				}
				e.out = &fileSyms{size: size, mtime: mtime, syms: syms}
			}
		})
	}
	for _, e := range found {
		if ctx.Err() != nil {
			break
		}
		work <- e
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err // a partial refresh is dropped: the index stays as it was
	}
	next := make(map[string]*fileSyms, len(found))
	for _, e := range found {
		if e.out != nil {
			next[e.rel] = e.out
		}
	}
	ix.files = next
	return nil
}

// Query selects symbols. Empty fields select everything.
type Query struct {
	// Name matches a symbol's name or Container.Name, ignoring case: exact
	// matches rank first, then prefixes, then substrings.
	Name string
	// Kind is one of the kinds Symbol lists; "func" also selects methods.
	Kind string
	// Keep, when set, selects by relative path (slash-separated).
	Keep func(path string) bool
	// Limit bounds the result; 0 means 50.
	Limit int
}

// Find refreshes the index and returns the symbols q selects, best first,
// at most q.Limit of them, and how many matched in all.
func (ix *Index) Find(ctx context.Context, q Query) ([]Symbol, int, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := ix.refresh(ctx); err != nil {
		return nil, 0, err
	}
	name := strings.ToLower(q.Name)
	type hit struct {
		rank int
		s    *Symbol
	}
	var hits []hit
	for rel, f := range ix.files {
		if q.Keep != nil && !q.Keep(rel) {
			continue
		}
		for i := range f.syms {
			s := &f.syms[i]
			if q.Kind != "" && s.Kind != q.Kind && !(q.Kind == "func" && s.Kind == "method") {
				continue
			}
			rank := 0
			if name != "" {
				if rank = matchRank(name, s); rank < 0 {
					continue
				}
			}
			hits = append(hits, hit{rank, s})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), strings.Compare(a.s.Path, b.s.Path), cmp.Compare(a.s.Line, b.s.Line))
	})
	limit := cmp.Or(q.Limit, 50)
	out := make([]Symbol, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, *h.s)
	}
	return out, len(hits), nil
}

// matchRank ranks how name (lower case) matches s: 0 exact, 1 prefix, 2
// substring, -1 not at all.
func matchRank(name string, s *Symbol) int {
	switch {
	case s.lname == name || s.lqual == name:
		return 0
	case strings.HasPrefix(s.lname, name) || strings.HasPrefix(s.lqual, name):
		return 1
	case strings.Contains(s.lqual, name):
		return 2
	}
	return -1
}

// Files reports how many files the index holds and how many symbols.
func (ix *Index) Files() (files, symbols int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, f := range ix.files {
		symbols += len(f.syms)
	}
	return len(ix.files), symbols
}
