// Command reasonix-plugin-example is a small, runnable MCP server that shows
// how a Reasonix plugin is built and that the mcp package's tests drive.
//
// By default it speaks MCP over stdio (one JSON message per line) and offers
// two read-only tools, echo and wordcount, one prompt (greet) and one resource
// (example://readme). With -http ADDR it serves the same over streamable HTTP
// instead.
//
// Tests need a server that misbehaves on purpose. With -test-tools (or the
// environment variable REASONIX_PLUGIN_TEST_TOOLS=1) it also lists crash
// (exits the process), slow (sleeps) and progress (reports progress while it
// works). They are hidden by default so nobody calls them by accident.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address (host:port) instead of stdio")
	testTools := flag.Bool("test-tools", os.Getenv("REASONIX_PLUGIN_TEST_TOOLS") == "1",
		"also list the misbehaving tools crash, slow and progress (for tests)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *httpAddr, *testTools); err != nil {
		fmt.Fprintln(os.Stderr, "reasonix-plugin-example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, httpAddr string, testTools bool) error {
	// Logs go to stderr: stdout carries the protocol in stdio mode.
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if httpAddr == "" {
		logger.Info("serving MCP over stdio")
		err := newServer(testTools).Run(ctx, &mcp.StdioTransport{})
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}

	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return err
	}
	// The first stdout line names the real address, so a test can ask for
	// port 0 and learn which port it got.
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	srv := newServer(testTools)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdownCtx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
