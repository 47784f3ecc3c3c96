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
	"strings"
	"time"

	"reasonix/runner/store"
)

// loginLinkFlags is `reasonix login-link`: a one-time link that signs a
// browser into the dashboard as a token's principal. Like `tokens`, it
// writes to the service's store directly: whoever can read the
// configuration and the database administers the service already.
func loginLinkFlags(fs *flag.FlagSet) action {
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
