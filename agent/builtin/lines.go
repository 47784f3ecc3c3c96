package builtin

import (
	"bufio"
	"errors"
	"io"
	"unicode/utf8"
)

// lineReader yields the lines of a text stream, keeping at most max bytes of
// each one. A file with a multi-megabyte minified line must not cost
// megabytes of memory per line, so the excess is counted, not kept.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64*1024), max: max}
}

// next returns the next line without its line ending, and how many bytes of
// it were cut. The returned slice is valid until the following call. At the
// end of the stream it returns io.EOF; a final line without a newline is
// still returned first.
func (lr *lineReader) next() (line []byte, cut int, err error) {
	lr.buf = lr.buf[:0]
	got, endedNL := false, false
	for {
		frag, err := lr.r.ReadSlice('\n')
		if len(frag) > 0 {
			got = true
			endedNL = frag[len(frag)-1] == '\n'
		}
		take := min(max(lr.max-len(lr.buf), 0), len(frag))
		lr.buf = append(lr.buf, frag[:take]...)
		cut += len(frag) - take
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		if !got {
			return nil, 0, io.EOF
		}
		break
	}
	if endedNL {
		if cut > 0 {
			cut--
		} else {
			lr.buf = lr.buf[:len(lr.buf)-1]
		}
	}
	if cut == 0 && len(lr.buf) > 0 && lr.buf[len(lr.buf)-1] == '\r' {
		lr.buf = lr.buf[:len(lr.buf)-1]
	}
	if cut > 0 {
		// Never end a shortened line inside a multi-byte character.
		keep := len(lr.buf)
		for i := len(lr.buf) - 1; i >= 0 && i >= len(lr.buf)-utf8.UTFMax; i-- {
			if utf8.RuneStart(lr.buf[i]) {
				if !utf8.FullRune(lr.buf[i:]) {
					keep = i
				}
				break
			}
		}
		cut += len(lr.buf) - keep
		lr.buf = lr.buf[:keep]
	}
	return lr.buf, cut, nil
}
