package workspace

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"reasonix/internal/procgroup"
)

// ErrObjectMismatch: an object of the repository does not hash to its
// name. git does not check this when it reads an object, and a task's
// sandbox may write the shared object store, so every object the service
// reads from a base commit is checked.
var ErrObjectMismatch = errors.New("workspace: an object of the repository does not match its hash")

// object is one object cat-file returned; data is nil when it was larger
// than the limit asked for (skipped unread and unchecked).
type object struct {
	kind string
	data []byte
}

// objectReader reads objects through one `git cat-file --batch` and
// checks each one's hash against its name.
type objectReader struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr lockedBuffer // written by os/exec's copying goroutine while we read answers
}

// lockedBuffer is a buffer one goroutine writes while another reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return tail(l.b.Bytes())
}

func (m *Manager) openObjects(ctx context.Context, gitDir string) (*objectReader, error) {
	argv := append(append(append(append([]string{"-C", gitDir}, noExec...), m.protected...), local...), "cat-file", "--batch")
	r := &objectReader{cmd: exec.CommandContext(ctx, m.gitPath, argv...)}
	r.cmd.Env = m.gitEnv
	r.cmd.Stderr = &r.stderr
	procgroup.Detach(r.cmd)
	r.cmd.Cancel = func() error { return procgroup.Kill(r.cmd) }
	r.cmd.WaitDelay = waitDelay
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("workspace: cat-file: %w", err)
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("workspace: cat-file: %w", err)
	}
	r.stdout = bufio.NewReaderSize(out, 64<<10)
	if err := r.cmd.Start(); err != nil {
		return nil, &gitError{args: []string{"cat-file", "--batch"}, code: -1, err: err}
	}
	return r, nil
}

// close ends cat-file: at the end of its input it writes what is still
// pending, which is drained so it can exit.
func (r *objectReader) close() {
	_ = r.stdin.Close()
	_, _ = io.Copy(io.Discard, r.stdout)
	_ = r.cmd.Wait()
}

// batch reads ids in order; an object over limit bytes comes back with nil
// data. The ids are written while the answers are read, so neither pipe
// can fill up and stall git.
func (r *objectReader) batch(ids []string, limit int) ([]object, error) {
	werr := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(r.stdin)
		for _, id := range ids {
			if _, err := w.WriteString(id + "\n"); err != nil {
				werr <- err
				return
			}
		}
		werr <- w.Flush()
	}()
	out := make([]object, 0, len(ids))
	var err error
	for _, id := range ids {
		var o object
		if o, err = r.next(id, limit); err != nil {
			break
		}
		out = append(out, o)
	}
	if e := <-werr; err == nil && e != nil {
		err = fmt.Errorf("workspace: cat-file: %w", e)
	}
	if err != nil {
		if t := r.stderr.tail(); t != "" {
			err = fmt.Errorf("%w: %s", err, t)
		}
		return nil, err
	}
	return out, nil
}

// next reads and checks the answer for id.
func (r *objectReader) next(id string, limit int) (object, error) {
	header, err := r.stdout.ReadString('\n')
	if err != nil {
		return object{}, fmt.Errorf("workspace: cat-file: %w", err)
	}
	f := strings.Fields(header)
	if len(f) != 3 || f[0] != id {
		return object{}, fmt.Errorf("workspace: cat-file: unexpected answer %q for %s", strings.TrimSpace(header), id)
	}
	n, err := strconv.Atoi(f[2])
	if err != nil || n < 0 {
		return object{}, fmt.Errorf("workspace: cat-file: unexpected size in %q", strings.TrimSpace(header))
	}
	if n > limit {
		if _, err := r.stdout.Discard(n + 1); err != nil {
			return object{}, fmt.Errorf("workspace: cat-file: %w", err)
		}
		return object{kind: f[1]}, nil
	}
	buf := make([]byte, n+1) // the content and its trailing newline
	if _, err := io.ReadFull(r.stdout, buf); err != nil {
		return object{}, fmt.Errorf("workspace: cat-file: %w", err)
	}
	o := object{kind: f[1], data: buf[:n]}
	if !hashMatches(id, o) {
		return object{}, fmt.Errorf("%w: %s %s (run git fsck on the repository; a task may have replaced it)", ErrObjectMismatch, o.kind, id)
	}
	return o, nil
}

// hashMatches recomputes an object's name: the hash of "<kind> <size>\0"
// and its content, SHA-1 or SHA-256 by the name's length.
func hashMatches(id string, o object) bool {
	var h hash.Hash
	switch len(id) {
	case 2 * sha1.Size:
		h = sha1.New()
	case 2 * sha256.Size:
		h = sha256.New()
	default:
		return false
	}
	fmt.Fprintf(h, "%s %d\x00", o.kind, len(o.data))
	h.Write(o.data)
	return hex.EncodeToString(h.Sum(nil)) == strings.ToLower(id)
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	mode string
	name string
	id   string
}

// parseTree reads a tree object's entries: "<mode> <name>\0<raw id>".
func parseTree(data []byte, idLen int) ([]treeEntry, error) {
	var out []treeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+idLen {
			return nil, errors.New("workspace: a malformed tree object")
		}
		out = append(out, treeEntry{mode: string(data[:sp]), name: string(data[sp+1 : nul]), id: hex.EncodeToString(data[nul+1 : nul+1+idLen])})
		data = data[nul+1+idLen:]
	}
	return out, nil
}

// commitTree returns the tree a commit object names.
func commitTree(data []byte) (string, error) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	id, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok {
		return "", errors.New("workspace: a commit object without a tree")
	}
	return string(id), nil
}

// Why a task has an object directory of its own: git never re-hashes an
// object it reads, so a task that could write the shared object store
// could replace what other tasks check out and what the owner's branches
// hold. The sandbox leaves the shared store read-only (policy:
// Confinement.GitEnv) and the task's git writes to <private>/objects; the
// service imports those objects at Finish and Release — loose ones hashed
// and rewritten here (importLoose), a pack through pack-objects and
// `index-pack --strict` — so nothing arrives under another object's name.

// ensureObjectDir makes the task's own object directory in its private git
// directory (git ignores a directory there; the sandbox grants it).
func ensureObjectDir(private string) error {
	for _, d := range []string{"pack", "info"} {
		if err := os.MkdirAll(filepath.Join(private, "objects", d), 0o755); err != nil {
			return fmt.Errorf("workspace: the task's object directory: %w", err)
		}
	}
	return nil
}

// importObjects moves the objects the task wrote into the shared store,
// re-hashed and checked, and empties the task's directory. Nothing to do
// (the usual case: the task did not commit itself) costs a directory read.
func (m *Manager) importObjects(ctx context.Context, common, private string) error {
	dir := filepath.Join(private, "objects")
	if !hasObjects(dir) {
		return nil
	}
	// The task's alternates only ever served its own reads.
	_ = os.Remove(filepath.Join(dir, "info", "alternates"))
	_ = os.Remove(filepath.Join(dir, "info", "http-alternates"))
	// Loose objects (what a commit writes) are checked and copied here;
	// only a pack (the task ran gc) needs git's own import.
	if err := importLoose(dir, filepath.Join(common, "objects")); err != nil {
		return err
	}
	if !hasObjects(dir) {
		return ensureObjectDir(private)
	}
	own := append(append([]string(nil), m.gitEnv...), "GIT_OBJECT_DIRECTORY="+dir)
	ids, err := m.run(ctx, own, local, common, nil, []string{"cat-file", "--batch-all-objects", "--batch-check=%(objectname)"})
	if err != nil {
		return err
	}
	if ids != "" {
		if err := os.MkdirAll(filepath.Join(m.root, "tmp"), 0o700); err != nil {
			return fmt.Errorf("workspace: import the task's objects: %w", err)
		}
		pack, err := os.CreateTemp(filepath.Join(m.root, "tmp"), "import-*.pack")
		if err != nil {
			return fmt.Errorf("workspace: import the task's objects: %w", err)
		}
		defer func() {
			_ = pack.Close()
			_ = os.Remove(pack.Name())
		}()
		if err := m.runTo(ctx, own, local, common, strings.NewReader(ids+"\n"), pack, []string{"pack-objects", "--stdout", "-q"}); err != nil {
			return err
		}
		if _, err := pack.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("workspace: import the task's objects: %w", err)
		}
		if _, err := m.run(ctx, m.gitEnv, local, common, pack, []string{"index-pack", "--stdin", "--strict"}); err != nil {
			return fmt.Errorf("workspace: the task's objects were refused: %w", err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("workspace: empty the task's object directory: %w", err)
	}
	return ensureObjectDir(private)
}

// hasObjects reports whether an object directory holds objects: loose
// ones or a pack (info/ only ever holds alternates).
func hasObjects(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch e.Name() {
		case "info":
		case "pack":
			if sub, err := os.ReadDir(filepath.Join(dir, "pack")); err == nil && len(sub) > 0 {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// importLoose moves every loose object of dir into the object store
// shared: each is decompressed, its header checked and its content hashed
// against its name (ErrObjectMismatch otherwise), and written to the store
// compressed afresh, so nothing but the checked bytes arrives. An object
// the store already has is not written again. Imported files are removed
// from dir.
func importLoose(dir, shared string) error {
	fans, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("workspace: import the task's objects: %w", err)
	}
	for _, fan := range fans {
		if len(fan.Name()) != 2 || !fan.IsDir() || !isHex(fan.Name()) {
			continue
		}
		names, err := os.ReadDir(filepath.Join(dir, fan.Name()))
		if err != nil {
			return fmt.Errorf("workspace: import the task's objects: %w", err)
		}
		for _, n := range names {
			id := fan.Name() + n.Name()
			if (len(id) != 2*sha1.Size && len(id) != 2*sha256.Size) || !isHex(id) || !n.Type().IsRegular() {
				continue // a temporary file of an interrupted write
			}
			src := filepath.Join(dir, fan.Name(), n.Name())
			if err := importObject(src, id, shared); err != nil {
				return err
			}
			_ = os.Remove(src)
		}
		_ = os.Remove(filepath.Join(dir, fan.Name()))
	}
	return nil
}

// importObject checks loose object file src against id and writes it to
// the store shared unless the store has it.
func importObject(src, id, shared string) (err error) {
	dest := filepath.Join(shared, id[:2], id[2:])
	if _, err := os.Lstat(dest); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("workspace: import object %s: %w", id, err)
	}
	defer in.Close()
	zr, err := zlib.NewReader(in)
	if err != nil {
		return fmt.Errorf("%w: %s is not a valid loose object", ErrObjectMismatch, id)
	}
	br := bufio.NewReader(zr)
	header, err := br.ReadString(0)
	if err != nil {
		return fmt.Errorf("%w: %s is not a valid loose object", ErrObjectMismatch, id)
	}
	kind, size, ok := strings.Cut(strings.TrimSuffix(header, "\x00"), " ")
	n, perr := strconv.ParseInt(size, 10, 64)
	if !ok || perr != nil || n < 0 || !slices.Contains([]string{"blob", "tree", "commit", "tag"}, kind) {
		return fmt.Errorf("%w: %s has a malformed header", ErrObjectMismatch, id)
	}
	var h hash.Hash = sha1.New()
	if len(id) == 2*sha256.Size {
		h = sha256.New()
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return fmt.Errorf("workspace: import object %s: %w", id, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "tmp_import_")
	if err != nil {
		return fmt.Errorf("workspace: import object %s: %w", id, err)
	}
	defer func() {
		_ = tmp.Close()
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	zw := zlib.NewWriter(tmp)
	h.Write([]byte(header))
	_, _ = zw.Write([]byte(header))
	copied, err := io.Copy(io.MultiWriter(h, zw), io.LimitReader(br, n+1))
	if err != nil || copied != n {
		return fmt.Errorf("%w: %s is truncated or longer than its header says", ErrObjectMismatch, id)
	}
	if hex.EncodeToString(h.Sum(nil)) != id {
		return fmt.Errorf("%w: %s (a task's object does not hash to its name)", ErrObjectMismatch, id)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("workspace: import object %s: %w", id, err)
	}
	if err := tmp.Chmod(0o444); err != nil {
		return fmt.Errorf("workspace: import object %s: %w", id, err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return fmt.Errorf("workspace: import object %s: %w", id, err)
	}
	return nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
