package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrClosed is returned by calls made after the Manager was stopped.
var ErrClosed = errors.New("mcp: manager is stopped")

// protocolVersion pins the handshake to the widely deployed
// initialize → notifications/initialized exchange with sessions, rather than
// the SDK's newer stateless probe.
const protocolVersion = "2025-11-25"

// server is one configured MCP server and its current connection.
type server struct {
	cfg ServerConfig
	m   *Manager
	sem chan struct{} // one slot for a Serial server, nil for Parallel

	mu         sync.Mutex
	state      State
	err        error
	cur        *conn         // the last connection that became ready; may have died since
	connecting chan struct{} // non-nil while a start runs; closed when it ends
	tools      []*sdk.Tool   // the listing of the first successful start
}

// conn is one live session with a server.
type conn struct {
	session  *sdk.ClientSession
	proc     *process // stdio only
	dead     chan struct{}
	deadErr  error    // why the session ended; set before dead closes
	progress sync.Map // progress token (string) → func(*sdk.ProgressNotificationParams)
}

func (c *conn) alive() bool {
	select {
	case <-c.dead:
		return false
	default:
		return true
	}
}

// startLocked begins a background start unless one is running. s.mu is held.
func (s *server) startLocked() {
	if s.connecting != nil || s.state == StateClosed {
		return
	}
	s.state = StateStarting
	s.err = nil
	done := make(chan struct{})
	s.connecting = done
	s.m.wg.Go(func() {
		c, tools, err := s.dial()
		if c != nil {
			s.m.wg.Go(func() { s.watch(c) })
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		defer close(done)
		s.connecting = nil
		if s.state == StateClosed {
			if c != nil {
				// Stopped while starting: nobody will use c.
				s.m.wg.Go(func() { s.closeConn(context.Background(), c, 0) })
			}
			return
		}
		if err != nil {
			s.state, s.err = StateFailed, err
			s.m.cfg.Logger.Warn("mcp server failed to start", "server", s.cfg.Name, "err", err)
			return
		}
		s.state, s.cur = StateReady, c
		if s.tools == nil {
			s.tools = tools
		}
		s.m.cfg.Logger.Info("mcp server ready", "server", s.cfg.Name, "tools", len(tools))
	})
}

// dial connects, initializes and lists tools, all within the startup timeout.
func (s *server) dial() (*conn, []*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(s.m.life, s.cfg.StartupTimeout)
	defer cancel()

	c := &conn{dead: make(chan struct{})}
	var transport sdk.Transport
	if s.cfg.Type == TypeStdio {
		p, err := startProcess(&s.cfg, s.m.cfg.WorkspaceRoot, s.m.cfg.Logger)
		if err != nil {
			return nil, nil, err
		}
		c.proc = p
		transport = &progressTransport{inner: &sdk.IOTransport{Reader: p.stdout, Writer: p.stdin}, c: c}
	} else {
		t, err := remoteTransport(&s.cfg, s.m.cfg.HTTPClient)
		if err != nil {
			return nil, nil, err
		}
		if s.cfg.Type == TypeSSE {
			t = &progressTransport{inner: t, c: c}
		}
		transport = t
	}

	client := sdk.NewClient(&sdk.Implementation{Name: "reasonix", Version: "dev"}, &sdk.ClientOptions{
		Logger: s.m.cfg.Logger,
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			c.deliverProgress(req.Params)
		},
	})
	if root := s.m.cfg.WorkspaceRoot; root != "" {
		client.AddRoots(&sdk.Root{URI: (&url.URL{Scheme: "file", Path: root}).String(), Name: "workspace"})
	}

	fail := func(err error) (*conn, []*sdk.Tool, error) {
		if ctx.Err() != nil && s.m.life.Err() == nil {
			err = fmt.Errorf("did not become ready within %s: %w", s.cfg.StartupTimeout, err)
		}
		if c.proc != nil {
			select {
			case <-c.proc.exited:
				err = fmt.Errorf("%w (process %v)", err, c.proc.exitError())
			default:
			}
		}
		if c.session != nil {
			_ = c.session.Close()
		}
		if c.proc != nil {
			// A server that never became ready earns no grace period.
			c.proc.stop(context.Background(), 0)
		}
		return nil, nil, fmt.Errorf("mcp: server %q: %w", s.cfg.Name, err)
	}

	session, err := client.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return fail(fmt.Errorf("initialize: %w", err))
	}
	c.session = session
	var tools []*sdk.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fail(fmt.Errorf("tools/list: %w", err))
		}
		tools = append(tools, t)
	}
	return c, tools, nil
}

// watch waits for c's session to end, records why, and reaps the process.
func (s *server) watch(c *conn) {
	err := c.session.Wait()
	if c.proc != nil {
		// The session usually ends because the process died; give the
		// reaper a moment so the error can say how it died.
		t := time.NewTimer(time.Second)
		select {
		case <-c.proc.exited:
			err = fmt.Errorf("process %v", c.proc.exitError())
		case <-t.C:
		}
		t.Stop()
		// A session closed on purpose is stopped by closeConn, which may
		// hurry; this stop only reaps a process that closed its stdout.
		c.proc.stop(context.Background(), s.m.cfg.ShutdownGrace)
	}
	if err == nil {
		err = errors.New("session closed")
	}
	c.deadErr = err
	close(c.dead)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == c && s.state == StateReady {
		s.state, s.err = StateFailed, fmt.Errorf("mcp: server %q: connection lost: %w", s.cfg.Name, err)
		s.m.cfg.Logger.Warn("mcp server connection lost; it restarts on next use", "server", s.cfg.Name, "err", err)
	}
}

// closeConn ends c and waits for its process, if any.
func (s *server) closeConn(ctx context.Context, c *conn, grace time.Duration) {
	_ = c.session.Close()
	if c.proc != nil {
		c.proc.stop(ctx, grace)
	}
	<-c.dead
}

// ready returns a live connection, starting the server if it is not running
// and waiting for the start (bounded by the startup timeout and ctx).
func (s *server) ready(ctx context.Context) (*conn, error) {
	s.mu.Lock()
	if s.state == StateClosed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if s.cur != nil && s.cur.alive() && s.state == StateReady {
		c := s.cur
		s.mu.Unlock()
		return c, nil
	}
	s.startLocked()
	wait := s.connecting
	s.mu.Unlock()

	select {
	case <-wait:
	case <-ctx.Done():
		return nil, fmt.Errorf("mcp: server %q: waiting to connect: %w", s.cfg.Name, ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state == StateClosed:
		return nil, ErrClosed
	case s.state == StateReady && s.cur.alive():
		return s.cur, nil
	case s.err != nil:
		return nil, s.err
	default:
		return nil, fmt.Errorf("mcp: server %q: connection lost while starting", s.cfg.Name)
	}
}

var progressSeq atomic.Uint64

// call runs the raw tool name with args on the server. onProgress, when not
// nil, receives the server's progress notifications for this call.
func (s *server) call(ctx context.Context, tool string, args json.RawMessage, onProgress progressFn) (*sdk.CallToolResult, error) {
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	if s.sem != nil {
		select {
		case s.sem <- struct{}{}:
			defer func() { <-s.sem }()
		case <-ctx.Done():
			return nil, fmt.Errorf("mcp: server %q is serial: waiting for the call before it: %w", s.cfg.Name, ctx.Err())
		}
		// The connection may have died while we waited for our turn.
		if !c.alive() {
			if c, err = s.ready(ctx); err != nil {
				return nil, err
			}
		}
	}

	// The call timeout starts only now that the connection is ready.
	timeout := s.cfg.callTimeout(tool)
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	params := &sdk.CallToolParams{Name: tool, Arguments: args}
	if onProgress != nil {
		token := "reasonix-" + strconv.FormatUint(progressSeq.Add(1), 10)
		c.progress.Store(token, onProgress)
		defer c.progress.Delete(token)
		params.SetProgressToken(token)
	}
	if c.proc != nil && s.m.cfg.WorkspaceRoot != "" {
		// Only a local server learns a local path.
		if params.Meta == nil {
			params.Meta = sdk.Meta{}
		}
		params.Meta["io.reasonix/cwd"] = s.m.cfg.WorkspaceRoot
	}

	res, err := c.session.CallTool(callCtx, params)
	if err == nil {
		return res, nil
	}
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("mcp: %s on server %q: %w", tool, s.cfg.Name, ctx.Err())
	case callCtx.Err() != nil:
		return nil, fmt.Errorf("mcp: %s on server %q timed out after %s", tool, s.cfg.Name, timeout)
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		// The server answered with an error: the connection is fine.
		return nil, fmt.Errorf("mcp: %s on server %q: %w", tool, s.cfg.Name, err)
	}
	// Anything else is the transport failing (EOF, closed pipe, dropped
	// session). Give watch a moment to record how the connection ended.
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-c.dead:
		return nil, fmt.Errorf("mcp: server %q stopped during %s (%v); it will be restarted on the next call", s.cfg.Name, tool, c.deadErr)
	case <-t.C:
		return nil, fmt.Errorf("mcp: %s on server %q: %w", tool, s.cfg.Name, err)
	}
}

// status reports the server's state.
func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Server: s.cfg.Name, Type: s.cfg.Type, State: s.state, Tools: len(s.tools), Err: s.err, Serial: s.sem != nil}
	if s.cur != nil && s.cur.alive() {
		if s.cur.proc != nil {
			st.PID = s.cur.proc.pid()
		}
		st.SessionID = s.cur.session.ID()
	}
	return st
}

// shutdown closes the server for good and waits for its connection to end.
func (s *server) shutdown(ctx context.Context) {
	s.mu.Lock()
	s.state, s.err = StateClosed, nil
	c := s.cur
	wait := s.connecting
	s.mu.Unlock()
	if wait != nil {
		// A start in flight notices the closed state and cleans up after itself.
		<-wait
	}
	if c != nil {
		s.closeConn(ctx, c, s.m.cfg.ShutdownGrace)
	}
}
