package runner

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"reasonix/runner/store"
)

// A scratch task (no workspace) has no branch to checkpoint, so when a
// drain hands it to another node its directory travels through the store:
// the stopping node packs it into a gzipped tar (at most
// Config.ScratchMoveLimit bytes), and the node that runs the task next
// unpacks it before the session starts and deletes it. A directory too
// large to pack stays where it is; the task continues elsewhere without it
// and its events say so. A node that dies takes its scratch directories
// with it (nothing packs them); the node taking over says so too.

// defaultScratchMoveLimit bounds a packed scratch directory.
const defaultScratchMoveLimit = 16 << 20

// maxScratchUnpacked bounds what a scratch archive unpacks to, whatever
// its compressed size: a run of zeros compresses a thousandfold.
const maxScratchUnpacked = 1 << 30

var errScratchTooLarge = errors.New("runner: the scratch directory is too large to move")

// isScratch reports whether w is a scratch directory (no workspace).
func isScratch(w *Workdir) bool { return w != nil && w.Spec == "" && w.Branch == "" }

// moveScratch packs the scratch directory of a task being handed over
// into the store and, once it is there, removes the local copy (so if the
// task comes back to this node, the newer archive is what it finds). It
// never stops the hand-over: a directory it cannot move is reported in
// the task's events, and an older archive is dropped so that nobody
// unpacks stale files.
func (s *Service) moveScratch(ctx context.Context, id string, w *Workdir) {
	archive, files, err := packScratch(w.Dir, s.cfg.ScratchMoveLimit)
	if err == nil {
		err = s.st.SaveScratch(ctx, id, s.node, archive)
	}
	if err != nil {
		reason := "its scratch directory could not be packed or saved; the files stay on node " + s.node
		if errors.Is(err, errScratchTooLarge) {
			reason = fmt.Sprintf("its scratch directory is larger than %d bytes packed; the files stay on node %s", s.cfg.ScratchMoveLimit, s.node)
		}
		s.log.Warn("runner: scratch directory not moved", "task", id, "err", err)
		if derr := s.st.DeleteScratch(ctx, id); derr != nil {
			s.log.Error("runner: dropping an older scratch archive", "task", id, "err", derr)
		}
		s.emitLogged(ctx, id, "scratch_not_moved", map[string]any{"node": s.node, "reason": reason, "limit_bytes": s.cfg.ScratchMoveLimit})
		// The node that runs the task next need not ask (awaitScratch).
		if err := s.st.AnswerScratchRequest(ctx, id, s.node); err != nil {
			s.log.Warn("runner: recording a scratch directory not moved", "task", id, "err", err)
		}
		return
	}
	if err := os.RemoveAll(w.Dir); err != nil {
		s.log.Warn("runner: removing a moved scratch directory", "task", id, "err", err)
	}
	s.emitLogged(ctx, id, "scratch_moved", map[string]any{"node": s.node, "files": files, "bytes": len(archive)})
}

// restoreScratch unpacks the scratch archive another node left for task
// id into w and deletes it. Only a task that ran before can have one. A
// failure is reported in the events and the run goes on with what it has.
func (s *Service) restoreScratch(ctx context.Context, task store.Task, w *Workdir) {
	if !isScratch(w) || task.Attempt < 2 {
		return
	}
	a, err := s.st.Scratch(ctx, task.ID)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err == nil {
		err = unpackScratch(a.Archive, w.Dir)
	}
	if err != nil {
		s.log.Error("runner: restoring the scratch directory", "task", task.ID, "err", err)
		s.emitLogged(ctx, task.ID, "scratch_not_moved", map[string]any{"node": s.node,
			"reason": "the scratch directory handed over could not be restored here; the task continues with what its directory holds"})
		return
	}
	if err := s.st.DeleteScratch(ctx, task.ID); err != nil {
		s.log.Warn("runner: deleting a restored scratch archive", "task", task.ID, "err", err)
	}
	s.emitLogged(ctx, task.ID, "scratch_restored", map[string]any{"node": s.node, "from": a.Node, "bytes": len(a.Archive)})
}

// capWriter fails once more than limit bytes are written to it.
type capWriter struct {
	buf   bytes.Buffer
	limit int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	if int64(c.buf.Len()+len(p)) > c.limit {
		return 0, errScratchTooLarge
	}
	return c.buf.Write(p)
}

// packScratch packs dir's directories, regular files and symbolic links
// (other kinds are skipped) into a gzipped tar of at most limit bytes. It
// returns errScratchTooLarge past the limit, or past maxScratchUnpacked
// bytes of file content.
func packScratch(dir string, limit int64) ([]byte, int, error) {
	out := &capWriter{limit: limit}
	zw := gzip.NewWriter(out)
	tw := tar.NewWriter(zw)
	files, total := 0, int64(0)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: int64(info.Mode().Perm()), ModTime: info.ModTime(), Format: tar.FormatPAX}
		switch {
		case d.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case info.Mode().IsRegular():
			hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
			if total += info.Size(); total > maxScratchUnpacked {
				return errScratchTooLarge
			}
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
		default:
			return nil // sockets, pipes, devices do not travel
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag == tar.TypeReg {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.CopyN(tw, f, hdr.Size)
			f.Close()
			if err != nil {
				return fmt.Errorf("pack %s: %w", rel, err)
			}
			files++
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return nil, 0, fmt.Errorf("runner: pack scratch directory: %w", err)
	}
	return out.buf.Bytes(), files, nil
}

// unpackScratch unpacks a packScratch archive into dir. Every write goes
// through an os.Root at dir, so no entry — a "../" name, an absolute one,
// a path through a symbolic link — lands outside it; such an archive is an
// error. Permissions keep their rwx bits only.
func unpackScratch(archive []byte, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("runner: unpack scratch directory: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("runner: unpack scratch directory: %w", err)
	}
	defer root.Close()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return fmt.Errorf("runner: unpack scratch directory: %w", err)
	}
	tr := tar.NewReader(zr)
	total := int64(0)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("runner: unpack scratch directory: %w", err)
		}
		name := path.Clean(strings.TrimSuffix(hdr.Name, "/"))
		if !filepath.IsLocal(name) {
			return fmt.Errorf("runner: unpack scratch directory: entry %q is outside the directory", hdr.Name)
		}
		perm := fs.FileMode(hdr.Mode).Perm()
		if err := unpackEntry(root, tr, hdr, name, perm, &total); err != nil {
			return fmt.Errorf("runner: unpack scratch directory: %s: %w", name, err)
		}
	}
}

func unpackEntry(root *os.Root, tr *tar.Reader, hdr *tar.Header, name string, perm fs.FileMode, total *int64) error {
	if parent := path.Dir(name); parent != "." {
		if err := root.MkdirAll(parent, 0o700); err != nil {
			return err
		}
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := root.MkdirAll(name, 0o700); err != nil {
			return err
		}
		return root.Chmod(name, perm|0o700)
	case tar.TypeReg:
		if *total += hdr.Size; hdr.Size < 0 || *total > maxScratchUnpacked {
			return errScratchTooLarge
		}
		if err := removeNonDir(root, name); err != nil {
			return err
		}
		f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm|0o600)
		if err != nil {
			return err
		}
		_, err = io.CopyN(f, tr, hdr.Size)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return root.Chtimes(name, hdr.ModTime, hdr.ModTime)
	case tar.TypeSymlink:
		if err := removeNonDir(root, name); err != nil {
			return err
		}
		// The target is kept as written; the links resolve as they did on
		// the other node, and nothing here writes through them.
		return root.Symlink(hdr.Linkname, name)
	}
	return nil // kinds packScratch never writes
}

// removeNonDir removes what is at name unless it is a directory, so a file
// or a link of the archive replaces it.
func removeNonDir(root *os.Root, name string) error {
	info, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.IsDir() {
		return fmt.Errorf("a directory is in the way")
	}
	return root.Remove(name)
}
