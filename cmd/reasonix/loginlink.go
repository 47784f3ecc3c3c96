package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"reasonix/runner/store"
)

// loginLinkFlags is `reasonix login-link`: a one-time link that signs a
// browser into the dashboard as a token's principal. Like `tokens`, it
// writes to the service's store directly: whoever can read the
// configuration and the database administers the service already.
func loginLinkFlags(fs *flag.FlagSet) action { return signInLink(fs, nil) }

// dashboardFlags is `reasonix dashboard [--open]`: the same link, opened in
// the desktop's browser on request.
func dashboardFlags(fs *flag.FlagSet) action {
	open := fs.Bool("open", false, "also open the link in the desktop's browser (xdg-open, or open on macOS)")
	return signInLink(fs, open)
}

// signInLink prints a one-time sign-in link and, when open is set and
// true, hands it to the desktop's browser.
func signInLink(fs *flag.FlagSet, open *bool) action {
	file := configFileFlag(fs)
	name := fs.String("token", store.BootstrapName, "`name` of the token whose principal the link signs in as")
	ttl := fs.Duration("ttl", 10*time.Minute, "how long the link stays usable (`duration`, at most 1h)")
	base := fs.String("url", "", "the dashboard's `base URL` (default [serve] public_url, else http:// and [serve] addr)")
	return func(_ []string, stdout, stderr io.Writer) error {
		if *ttl <= 0 || *ttl > time.Hour {
			return usageErrorf("--ttl must be between 1s and 1h, got %s", *ttl)
		}
		cfg, err := loadServiceConfig(*file)
		if err != nil {
			return err
		}
		root := cmp.Or(*base, cfg.Serve.BaseURL(), "http://"+dialable(cfg.Serve.Addr))
		u, err := url.Parse(strings.TrimRight(root, "/") + "/login/link")
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErrorf("--url %q is not an http(s) URL", root)
		}
		return withStore(*file, stderr, func(ctx context.Context, st *store.Store) error {
			code, err := st.CreateLoginCode(ctx, *name, *ttl)
			if errors.Is(err, store.ErrNotFound) {
				return usageErrorf("no valid token is called %q (see `reasonix tokens list`; the service's own is %q)", *name, store.BootstrapName)
			}
			if err != nil {
				return err
			}
			u.RawQuery = url.Values{"code": {code}}.Encode()
			fmt.Fprintln(stdout, u.String())
			fmt.Fprintf(stderr, "signs in once as token:%s, within %s\n", *name, *ttl)
			if open != nil && *open {
				openInBrowser(ctx, u.String(), stderr)
			}
			return nil
		})
	}
}

// dialable turns a listen address into one a browser can open: a wildcard
// host becomes localhost.
func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// openInBrowser hands link to the desktop's opener. Not finding one (a
// server without a desktop) or its failing is only reported: the link is
// printed already, to be opened by hand. On Linux "open" may be openvt,
// so only macOS uses it.
func openInBrowser(ctx context.Context, link string, stderr io.Writer) {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	path, err := exec.LookPath(opener)
	if err != nil {
		fmt.Fprintf(stderr, "no %s found: open the link above yourself\n", opener)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, path, link).CombinedOutput(); err != nil {
		fmt.Fprintf(stderr, "%s failed (%v): open the link above yourself\n%s", opener, err, out)
	}
}
