package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// healthFlags registers `reasonix health`: the probe a container's
// HEALTHCHECK runs, so the image needs no curl.
func healthFlags(fs *flag.FlagSet) action {
	file := configFileFlag(fs)
	server := fs.String("server", "", "the service's base `URL` (default http://[serve] addr, $REASONIX_ADDR applied)")
	ready := fs.Bool("ready", false, "probe /readyz (taking work) instead of /healthz (alive)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this `duration`")
	return func(_ []string, stdout, _ io.Writer) error {
		base := *server
		if base == "" {
			cfg, err := loadServiceConfig(*file)
			if err != nil {
				return err
			}
			base = "http://" + probeAddr(cfg.Serve.Addr)
		}
		path := "/healthz"
		if *ready {
			path = "/readyz"
		}
		return probe(strings.TrimRight(base, "/")+path, *timeout, stdout)
	}
}

// probeAddr turns a listen address into one to connect to: a service
// listening on every interface is reached on loopback.
func probeAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}

// errUnhealthy exits 1 without more words: probe has said why on stdout.
var errUnhealthy = &exitError{code: 1}

// probe GETs url and succeeds on 200.
func probe(url string, timeout time.Duration, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return usageErrorf("--server: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stdout, "unhealthy: %v\n", err)
		return errUnhealthy
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stdout, "unhealthy: %s: %s\n", url, resp.Status)
		return errUnhealthy
	}
	fmt.Fprintf(stdout, "ok: %s\n", url)
	return nil
}
