// Package intakebudgettest makes request bodies for tests of the intakes
// that read within an intake budget: as large as a test wants without
// the memory, counting what the handler read of them, and able to hold
// the handler at their first byte as a slow upload does.
package intakebudgettest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

var alphabet = bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz"), 2600)

// Upload is a body of a given size whose bytes repeat the alphabet, made
// as they are read. It is safe to read from one goroutine while another
// asks Read.
type Upload struct {
	left int64
	read atomic.Int64
	gate <-chan struct{}
}

var _ io.ReadCloser = (*Upload)(nil)

// NewUpload returns a body of size bytes. With gate non-nil, its first
// Read waits until gate is closed.
func NewUpload(size int64, gate <-chan struct{}) *Upload {
	return &Upload{left: size, gate: gate}
}

// Read reads the next bytes; it is io.EOF at the end.
func (u *Upload) Read(p []byte) (int, error) {
	if u.gate != nil {
		<-u.gate
	}
	if u.left == 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), u.left))
	for off, q := u.read.Load(), p[:n]; len(q) > 0; {
		c := copy(q, alphabet[off%26:])
		q, off = q[c:], off+int64(c)
	}
	u.left -= int64(n)
	u.read.Add(int64(n))
	return n, nil
}

// Close does nothing.
func (*Upload) Close() error { return nil }

// BytesRead is how many bytes were read so far.
func (u *Upload) BytesRead() int64 { return u.read.Load() }

// Content is what an Upload of size bytes reads as.
func Content(size int64) []byte {
	b, _ := io.ReadAll(NewUpload(size, nil))
	return b
}

// Post is a POST of size bytes to target (a path, for a handler called in
// process), with the upload it reads; chunked leaves its length
// undeclared, as a chunked upload does.
func Post(target string, size int64, chunked bool, gate <-chan struct{}) (*http.Request, *Upload) {
	u := NewUpload(size, gate)
	r := httptest.NewRequest("POST", target, u)
	r.ContentLength = size
	if chunked {
		r.ContentLength = -1
	}
	return r, u
}
