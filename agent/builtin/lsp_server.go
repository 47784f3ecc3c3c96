package builtin

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"reasonix/agent"
	"reasonix/internal/lsp"
	"reasonix/internal/procgroup"
)

// The lsp_* tools ask a language server — gopls, for Go — where a name is
// defined, where it is used, what it is, and what is wrong with a file.
// They exist only when the server is installed: a run on a machine
// without gopls does not see them at all, rather than seeing tools that
// always fail.
//
// The server reads the task's go.mod and runs the go command on it, so it
// runs exactly where bash runs: through the run's shell wrapper (the OS
// sandbox), in the workspace, with the shell's environment, in its own
// process group. One server serves all the lsp_* calls of a run; it is a
// job of the run (agent.Jobs), so it ends when the run does.

// goplsFound is whether gopls was on PATH when the service started.
var goplsFound = func() bool { _, err := exec.LookPath("gopls"); return err == nil }()

const (
	lspStartTimeout = 60 * time.Second
	lspCallTimeout  = 60 * time.Second
	lspStopGrace    = 2 * time.Second
	// lspDiagQuiet is how long lsp_diagnostics waits for the server's
	// next publication once the first one for the file's version arrived:
	// gopls publishes syntax problems first and type errors after.
	lspDiagQuiet = 1500 * time.Millisecond
	lspMaxList   = 200
)

func registerLSP(name string, f agent.ToolFactory) {
	if goplsFound {
		agent.RegisterBuiltin(name, f)
	}
}

// lspServer is one running language server.
type lspServer struct {
	conn   *lsp.Conn
	cmd    *exec.Cmd
	stdin  *os.File
	exited chan struct{}

	mu          sync.Mutex
	docs        map[string]lspDoc // by URI
	stop        sync.Once
	initialized bool // it answered initialize: it can be asked to shut down
}

type lspDoc struct {
	version int
	text    string
}

var (
	// lspStart serialises starts, so a run never gets two servers.
	lspStart sync.Mutex
	// lspMu guards lspServers; a stopping server takes it, also from
	// inside Jobs.Add while a start holds lspStart.
	lspMu      sync.Mutex
	lspServers = map[*agent.Jobs]*lspServer{}
)

// lspRecorded is the run's server as recorded, if any.
func lspRecorded(jobs *agent.Jobs) *lspServer {
	lspMu.Lock()
	defer lspMu.Unlock()
	return lspServers[jobs]
}

// lspFor returns the run's server, starting it on first use.
func lspFor(ctx context.Context, tool string, env agent.ToolEnv) (*lspServer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if env.Jobs == nil {
		return nil, fmt.Errorf("%s: the language server needs a run that can hold background processes", tool)
	}
	lspStart.Lock()
	defer lspStart.Unlock()
	if s := lspRecorded(env.Jobs); s != nil {
		select {
		case <-s.exited: // it died: start another
		default:
			return s, nil
		}
	}
	s, err := startLSP(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("%s: starting gopls: %w", tool, err)
	}
	lspMu.Lock()
	lspServers[env.Jobs] = s
	lspMu.Unlock()
	// Add stops the server (and forgets it) when the run has ended.
	if _, err := env.Jobs.Add(lspJob{s, env.Jobs}); err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return s, nil
}

// lspJob is the server as a job of the run: stopping it forgets it.
type lspJob struct {
	s    *lspServer
	jobs *agent.Jobs
}

func (j lspJob) Stop() {
	j.s.Stop()
	lspMu.Lock()
	if lspServers[j.jobs] == j.s {
		delete(lspServers, j.jobs)
	}
	lspMu.Unlock()
}

// errUnconfined refuses to start the server outside the sandbox.
var errUnconfined = errors.New("the language server runs only inside the bash sandbox, and this run has none")

func startLSP(ctx context.Context, env agent.ToolEnv) (*lspServer, error) {
	const script = "exec gopls"
	starter, _ := env.Shell.(agent.ShellStarter)
	var argv []string
	switch {
	case env.Shell == nil:
		return nil, errUnconfined
	case starter != nil:
		argv = []string{"bash", "-c", script}
	default:
		wrapped, err := env.Shell.WrapShell(env.Workdir, script)
		if err != nil {
			return nil, err
		}
		// A wrapper that hands the script back as it is confines nothing.
		if len(wrapped) == 0 || slices.Equal(wrapped, []string{"bash", "-c", script}) {
			return nil, errUnconfined
		}
		argv = wrapped
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = env.Workdir, env.ShellEnv
	cmd.Stdin, cmd.Stdout = inR, outW // stderr: /dev/null; gopls logs there
	procgroup.Detach(cmd)
	s := &lspServer{cmd: cmd, stdin: inW, exited: make(chan struct{}), docs: map[string]lspDoc{}}
	started := make(chan error, 1)
	go func() {
		defer close(s.exited)
		done := func() {}
		var err error
		if starter != nil {
			err = procgroup.StartBoundWith(cmd, starter.StartShell)
		} else {
			done, err = procgroup.StartBound(cmd)
		}
		started <- err
		if err != nil {
			return
		}
		_ = cmd.Wait()
		done()
		_ = procgroup.Kill(cmd)
	}()
	err = <-started
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	s.conn = lsp.NewConn(outR, inW)
	go func() { // the read end goes once the server has exited and been read to the end
		<-s.conn.Done()
		outR.Close()
	}()
	ictx, cancel := context.WithTimeout(ctx, lspStartTimeout)
	defer cancel()
	root := fileURI(env.Workdir)
	params := map[string]any{
		"processId":        os.Getpid(),
		"rootUri":          root,
		"workspaceFolders": []map[string]string{{"uri": root, "name": filepath.Base(env.Workdir)}},
		"capabilities": map[string]any{
			"textDocument": map[string]any{
				"hover":              map[string]any{"contentFormat": []string{"plaintext"}},
				"definition":         map[string]any{"linkSupport": false},
				"publishDiagnostics": map[string]any{"versionSupport": true},
			},
			"workspace": map[string]any{"configuration": true, "workspaceFolders": true},
		},
	}
	if err := s.conn.Call(ictx, "initialize", params, nil); err != nil {
		s.Stop()
		return nil, err
	}
	s.initialized = true
	if err := s.conn.Notify("initialized", map[string]any{}); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop asks the server to shut down, then kills its process group, and
// returns once it has exited.
func (s *lspServer) Stop() {
	s.stop.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), lspStopGrace)
		defer cancel()
		if s.initialized && s.conn.Call(ctx, "shutdown", nil, nil) == nil {
			_ = s.conn.Notify("exit", nil)
		}
		s.stdin.Close()
		if !s.initialized {
			_ = procgroup.Kill(s.cmd)
		}
		select {
		case <-s.exited:
		case <-ctx.Done():
			_ = procgroup.Kill(s.cmd)
			<-s.exited
		}
	})
}

// sync tells the server the file's current content (path is resolved and
// readable) and returns its URI.
func (s *lspServer) sync(path string) (string, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	if looksBinary(data) {
		return "", "", fmt.Errorf("%s is not a text file", path)
	}
	uri, text := fileURI(path), string(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	d, open := s.docs[uri]
	switch {
	case !open:
		d = lspDoc{version: 1, text: text}
		err = s.conn.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": uri, "languageId": "go", "version": d.version, "text": text}})
	case d.text != text:
		d = lspDoc{version: d.version + 1, text: text}
		err = s.conn.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": d.version},
			"contentChanges": []map[string]any{{"text": text}}})
	}
	s.docs[uri] = d
	return uri, text, err
}

func (s *lspServer) version(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[uri].version
}

// fileURI is the file: URI of an absolute path.
func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// uriPath is the path of a file: URI, "" for another scheme.
func uriPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

// lspPosition turns a 1-based line and either a symbol on it or a 1-based
// byte column into the protocol's position (UTF-16 units).
func lspPosition(text string, line int, symbol string, column int) (lsp.Position, error) {
	lines := strings.Split(text, "\n")
	if line < 1 || line > len(lines) {
		return lsp.Position{}, fmt.Errorf("line %d is outside the file (1..%d)", line, len(lines))
	}
	l := lines[line-1]
	col := column - 1
	if symbol != "" {
		col = wordIndex(l, symbol)
		if col < 0 {
			return lsp.Position{}, fmt.Errorf("%q does not occur on line %d: %s", symbol, line, strings.TrimSpace(l))
		}
	} else if col < 0 || col > len(l) {
		return lsp.Position{}, fmt.Errorf("column %d is outside line %d (1..%d)", column, line, len(l)+1)
	}
	return lsp.Position{Line: line - 1, Character: utf16Len(l[:col])}, nil
}

// wordIndex finds word in line as a whole word, else anywhere; -1 if not.
func wordIndex(line, word string) int {
	for i := 0; ; {
		j := strings.Index(line[i:], word)
		if j < 0 {
			break
		}
		at := i + j
		before, _ := utf8.DecodeLastRuneInString(line[:at])
		after, _ := utf8.DecodeRuneInString(line[at+len(word):])
		if !isIdentRune(before) && !isIdentRune(after) {
			return at
		}
		i = at + 1
	}
	return strings.Index(line, word)
}

func isIdentRune(r rune) bool {
	return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > utf8.RuneSelf && r != utf8.RuneError
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// byteColumn turns a protocol character offset on a line back into a
// 1-based byte column.
func byteColumn(line string, char int) int {
	units := 0
	for i, r := range line {
		if units >= char {
			return i + 1
		}
		units += utf16.RuneLen(r)
	}
	return len(line) + 1
}
