package acp

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"reasonix/agent"
)

// The editor's terminal (clientCapabilities.terminal) shows a foreground
// bash command while it runs here, in Reasonix's sandbox: the editor never
// runs the command. terminal/create starts `reasonix acp attach SOCKET`
// (attach.go), which connects to a Unix socket in a 0700 directory of this
// process, presents a one-time token and prints the command's output as
// bash produces it (agent.LiveOutput), then exits with its exit status.

const (
	// attachWait is how long a terminal has to attach (from when the
	// editor answered terminal/create) before the call falls back to its
	// text result; a session whose terminal never attached (an editor
	// whose terminals run on another host) gets no more.
	attachWait = 5 * time.Second
	// drainWait is how long a finished command waits for its terminal to
	// show the rest of its output.
	drainWait = 5 * time.Second
	// maxPending bounds the output kept for a terminal that has not read
	// it yet; the rest is counted and said to be missing.
	maxPending = 4 << 20
)

// terminals is the process's attach socket: one listener, one-time tokens
// each naming the command they show.
type terminals struct {
	dir, socket string
	ln          net.Listener
	logf        func(msg string, args ...any)

	mu    sync.Mutex
	terms map[[32]byte]*term
	conns sync.WaitGroup
}

// terminals returns the agent's attach socket, opening it on first use.
func (a *Agent) terminals() (*terminals, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.terms != nil {
		return a.terms, nil
	}
	// A short private directory: a socket path is limited to ~100 bytes,
	// and 0700 keeps other users out (the token keeps out the rest).
	dir, err := os.MkdirTemp("", "reasonix-acp-")
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "attach.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ts := &terminals{dir: dir, socket: sock, ln: ln, terms: map[[32]byte]*term{},
		logf: func(msg string, args ...any) { a.cfg.Logger.Warn(msg, args...) }}
	// The accept loop counts as a connection, so no Add ever races with
	// close's Wait at zero.
	ts.conns.Add(1)
	go ts.accept()
	a.terms = ts
	return ts, nil
}

func (ts *terminals) accept() {
	defer ts.conns.Done()
	for {
		c, err := ts.ln.Accept()
		if err != nil {
			return
		}
		ts.conns.Add(1)
		go func() {
			defer ts.conns.Done()
			ts.serve(c)
		}()
	}
}

// close stops the listener and every connection, and removes the socket.
func (ts *terminals) close() {
	ts.ln.Close()
	ts.mu.Lock()
	all := ts.terms
	ts.terms = map[[32]byte]*term{}
	ts.mu.Unlock()
	for _, t := range all {
		t.end(-1)
	}
	ts.conns.Wait()
	os.RemoveAll(ts.dir)
}

// add registers t under a new token and returns the token.
func (ts *terminals) add(t *term) string {
	tok := newToken()
	ts.mu.Lock()
	ts.terms[sha256.Sum256([]byte(tok))] = t
	ts.mu.Unlock()
	return tok
}

// take returns the term of a token and forgets the token: it is good for
// one connection.
func (ts *terminals) take(tok string) *term {
	key := sha256.Sum256([]byte(tok))
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.terms[key]
	delete(ts.terms, key)
	return t
}

// drop forgets t's token if it was not used.
func (ts *terminals) drop(t *term) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for k, v := range ts.terms {
		if v == t {
			delete(ts.terms, k)
		}
	}
}

// serve checks a connection's hello and streams its command's output.
func (ts *terminals) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(attachWait))
	tok, ok := readHello(c)
	var t *term
	if ok {
		t = ts.take(tok)
	}
	if t == nil {
		ts.logf("acp: an attach with an unknown or used token was refused")
		_ = writeFrame(c, frameRefused, []byte("unknown or used token"))
		return
	}
	_ = c.SetDeadline(time.Time{})
	t.stream(c)
}

// term is one command shown in one terminal.
type term struct {
	kill func()

	// created is closed when terminal/create was answered; id is then the
	// editor's terminal, "" when it failed.
	created chan struct{}
	// id and abandoned (Done stopped waiting for it) are under mu.
	id        string
	abandoned bool
	// attached is closed when the terminal connected, shown when it
	// has shown everything (or gone).
	attached, shown chan struct{}

	mu      sync.Mutex
	pending []byte
	dropped int64
	ended   bool
	code    int
	wake    chan struct{}
	conn    net.Conn
}

func newTerm(kill func()) *term {
	return &term{kill: kill, created: make(chan struct{}), attached: make(chan struct{}), shown: make(chan struct{}), wake: make(chan struct{}, 1)}
}

func (t *term) signal() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Write keeps output for the terminal; it never blocks.
func (t *term) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return len(p), nil
	}
	if t.dropped > 0 || len(t.pending)+len(p) > maxPending {
		t.dropped += int64(len(p))
	} else {
		t.pending = append(t.pending, p...)
	}
	t.signal()
	return len(p), nil
}

// end records the command's exit status.
func (t *term) end(code int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ended {
		t.ended, t.code = true, code
		t.signal()
	}
}

// stream sends the output to the terminal as it comes, then the exit
// status, and waits for the terminal to close. A terminal that goes
// before the command ended stops the command: the editor killed it.
func (t *term) stream(c net.Conn) {
	t.mu.Lock()
	t.conn = c
	t.mu.Unlock()
	close(t.attached)
	defer close(t.shown)
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		var b [512]byte
		for {
			if _, err := c.Read(b[:]); err != nil {
				return
			}
		}
	}()
	for {
		t.mu.Lock()
		out, dropped, ended, code := t.pending, t.dropped, t.ended, t.code
		t.pending, t.dropped = nil, 0
		t.mu.Unlock()
		if err := sendOutput(c, out, dropped); err != nil {
			t.stop(ended)
			return
		}
		if ended && len(out) == 0 && dropped == 0 {
			var p [4]byte
			binary.BigEndian.PutUint32(p[:], uint32(int32(code)))
			if writeFrame(c, frameStatus, p[:]) == nil {
				<-gone
			}
			return
		}
		select {
		case <-t.wake:
		case <-gone:
			t.mu.Lock()
			ended = t.ended
			t.mu.Unlock()
			t.stop(ended)
			return
		}
	}
}

// stop kills the command when its terminal went before it ended.
func (t *term) stop(ended bool) {
	if !ended {
		t.kill()
	}
}

// sendOutput writes out in frames, then says how much was not kept.
func sendOutput(c io.Writer, out []byte, dropped int64) error {
	for len(out) > 0 {
		n := min(len(out), maxFrame)
		if err := writeFrame(c, frameOut, out[:n]); err != nil {
			return err
		}
		out = out[n:]
	}
	if dropped > 0 {
		return writeFrame(c, frameOut, fmt.Appendf(nil, "\n[reasonix: %d bytes of output not shown here]\n", dropped))
	}
	return nil
}

// closeConn ends a terminal's connection (after drainWait).
func (t *term) closeConn() {
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// liveCall is the agent.LiveOutput of one bash call shown in a terminal.
type liveCall struct {
	*term
	l    *live
	ts   *terminals
	call string
	ctx  context.Context
}

// liveOutput opens a terminal for a foreground bash command of a call the
// editor was shown, when the editor has terminals.
func (l *live) liveOutput(ctx context.Context, command string, kill func()) agent.LiveOutput {
	if !l.a.clientCaps().terminal || l.noTerminal.Load() {
		return nil
	}
	call, ok := agent.ToolCallFromContext(ctx)
	if !ok {
		return nil
	}
	if _, shown := l.shown.Load(call.ID); !shown {
		return nil
	}
	ts, err := l.a.terminals()
	if err != nil {
		l.a.cfg.Logger.Warn("acp: no attach socket; the command is not shown in a terminal", "err", err)
		l.noTerminal.Store(true)
		return nil
	}
	t := newTerm(kill)
	tok := ts.add(t)
	lc := &liveCall{term: t, l: l, ts: ts, call: call.ID, ctx: ctx}
	go lc.create(tok)
	return lc
}

// create asks the editor for the terminal that attaches, and shows it on
// the call's card.
func (lc *liveCall) create(tok string) {
	defer close(lc.created)
	l := lc.l
	cwd := l.cwd
	resp, err := sdk.SendRequest[sdk.CreateTerminalResponse](l.a.conn, lc.ctx, "terminal/create", sdk.CreateTerminalRequest{
		SessionId: sdk.SessionId(l.id),
		Command:   l.a.attach[0],
		Args:      append(append([]string{}, l.a.attach[1:]...), lc.ts.socket),
		Env:       []sdk.EnvVariable{{Name: AttachTokenEnv, Value: tok}},
		Cwd:       &cwd,
	})
	if err != nil || resp.TerminalId == "" {
		l.a.cfg.Logger.Warn("acp: terminal/create failed; the command is shown as its result", "err", err)
		return
	}
	lc.mu.Lock()
	late := lc.abandoned
	if !late {
		lc.id = resp.TerminalId
	}
	lc.mu.Unlock()
	if late {
		// Done gave up waiting for this answer: nothing will attach.
		lc.release(resp.TerminalId)
		return
	}
	l.a.notify(l.id, sdk.UpdateToolCall(sdk.ToolCallId(lc.call),
		sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(lc.id)})))
}

// Done ends the command's output: the terminal shows the rest and exits
// with code, then is released. A terminal that did not attach in time
// leaves the call to its text result, and the session to text results.
func (lc *liveCall) Done(code int) {
	l := lc.l
	lc.end(code)
	defer lc.ts.drop(lc.term)
	select {
	case <-lc.created:
	case <-time.After(attachWait):
	}
	lc.mu.Lock()
	id := lc.id
	lc.abandoned = id == ""
	lc.mu.Unlock()
	if id == "" {
		return
	}
	select {
	case <-lc.attached:
		select {
		case <-lc.shown:
		case <-time.After(drainWait):
		}
		lc.closeConn()
		l.terminals.Store(lc.call, id)
		// Releasing a terminal kills what it runs: let the attach exit
		// with the command's status first.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(lc.ctx), drainWait)
		if _, err := sdk.SendRequest[map[string]any](l.a.conn, wctx, "terminal/wait_for_exit",
			sdk.WaitForTerminalExitRequest{SessionId: sdk.SessionId(l.id), TerminalId: id}); err != nil {
			l.a.cfg.Logger.Debug("acp: terminal/wait_for_exit", "err", err)
		}
		cancel()
	case <-time.After(attachWait):
		l.a.cfg.Logger.Warn("acp: the editor's terminal did not attach; commands are shown as their results from now on", "session", l.id)
		l.noTerminal.Store(true)
	}
	lc.release(id)
}

// release tells the editor the terminal is done with.
func (lc *liveCall) release(id string) {
	l := lc.l
	rctx, cancel := context.WithTimeout(context.WithoutCancel(lc.ctx), drainWait)
	defer cancel()
	if _, err := sdk.SendRequest[map[string]any](l.a.conn, rctx, "terminal/release",
		sdk.ReleaseTerminalRequest{SessionId: sdk.SessionId(l.id), TerminalId: id}); err != nil && !errors.Is(err, context.Canceled) {
		l.a.cfg.Logger.Debug("acp: terminal/release", "err", err)
	}
}

// finishTerminal is the completed update of a call its terminal showed:
// the terminal stays its content, the text result is its raw output.
func finishTerminal(id, terminal string, status sdk.ToolCallStatus, text string) sdk.SessionUpdate {
	return sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(status),
		sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(terminal)}),
		sdk.WithUpdateRawOutput(map[string]string{"output": bound(text)}))
}
