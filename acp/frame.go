package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"unicode/utf8"
)

// MaxFrame bounds one NDJSON frame. A longer line is answered with an
// error and skipped without being held in memory: an editor sends prompts
// and file contents, never frames this large.
const MaxFrame = 8 << 20

// JSON-RPC 2.0 error codes the framing guard answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// lineWriter writes whole protocol messages to the peer, one Write per
// message under one lock, so the guard's error replies and the
// connection's messages never interleave on the wire.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// frameError is the reply to a frame the guard refused.
type frameError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeFrameError(w io.Writer, id json.RawMessage, code int, msg string) error {
	e := frameError{JSONRPC: "2.0", ID: id}
	if len(id) == 0 {
		e.ID = json.RawMessage("null")
	}
	e.Error.Code, e.Error.Message = code, msg
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// pump reads NDJSON frames from r. A well-formed JSON-RPC message goes to
// fwd (the SDK connection), one line each; anything else is answered on
// reply with a JSON-RPC error (id null unless the frame's id could be
// read), so a client learns its frame was refused. It returns when r ends
// (nil) or a write fails.
func pump(r io.Reader, reply, fwd io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		line = line[:0]
		over := false
		var readErr error
		for {
			chunk, err := br.ReadSlice('\n')
			if !over {
				if len(line)+len(chunk) > MaxFrame+1 { // +1: the newline; checked exactly below
					over, line = true, line[:0]
				} else {
					line = append(line, chunk...)
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			readErr = err
			break
		}
		if !over && len(bytes.TrimSuffix(line, []byte("\n"))) > MaxFrame {
			over = true
		}
		if over {
			if err := writeFrameError(reply, nil, codeInvalidRequest, "frame exceeds the 8 MiB limit"); err != nil {
				return err
			}
		} else if frame := bytes.TrimSpace(line); len(frame) > 0 {
			if id, code, msg := checkFrame(frame); code != 0 {
				if err := writeFrameError(reply, id, code, msg); err != nil {
					return err
				}
			} else if _, err := fwd.Write(append(frame, '\n')); err != nil {
				return err
			}
		}
		if readErr != nil {
			if readErr == io.EOF {
				return nil
			}
			return readErr
		}
	}
}

// envelope is a JSON-RPC message's members, kept raw so their types can
// be checked.
type envelope struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// checkFrame says whether frame is a JSON-RPC 2.0 request, notification or
// response the connection can take; when not, the error code and message
// to answer with, and the frame's id when it had a usable one.
func checkFrame(frame []byte) (id json.RawMessage, code int, msg string) {
	if !utf8.Valid(frame) {
		return nil, codeParseError, "parse error: the frame is not valid UTF-8"
	}
	if !json.Valid(frame) {
		return nil, codeParseError, "parse error: the frame is not one JSON value"
	}
	if frame[0] != '{' {
		return nil, codeInvalidRequest, "invalid request: a frame must be one JSON-RPC object (batches are not supported)"
	}
	var env envelope
	if err := json.Unmarshal(frame, &env); err != nil {
		return nil, codeInvalidRequest, "invalid request: " + err.Error()
	}
	if env.ID != nil && !validID(env.ID) {
		return nil, codeInvalidRequest, "invalid request: id must be a string, a number or null"
	}
	if string(env.JSONRPC) != `"2.0"` {
		return env.ID, codeInvalidRequest, `invalid request: jsonrpc must be "2.0"`
	}
	switch {
	case env.Method != nil:
		var m string
		if json.Unmarshal(env.Method, &m) != nil || m == "" {
			return env.ID, codeInvalidRequest, "invalid request: method must be a non-empty string"
		}
	case env.ID != nil && (env.Result != nil || env.Error != nil):
		// A response to one of our requests.
	default:
		return env.ID, codeInvalidRequest, "invalid request: neither a method nor a response"
	}
	return nil, 0, ""
}

func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// A number id is bounded: the SDK canonicalises it digit by digit.
		return raw[0] == '"' || string(raw) == "null" || len(raw) <= 64
	}
	return false
}
