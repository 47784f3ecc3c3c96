package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxScratchUnpacked bounds what a scratch archive unpacks to, whatever
// its compressed size: a run of zeros compresses a thousandfold.
const maxScratchUnpacked = 1 << 30

// errScratchTooLarge is packing's error for a directory past its limit.
var errScratchTooLarge = errors.New("runner: the scratch directory is too large to move")

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
