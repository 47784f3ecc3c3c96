package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds on what a forge may make this process hold or read.
const (
	maxBody      = 8 << 20  // one JSON answer
	maxErrorBody = 64 << 10 // the body of an error answer
	maxLogRead   = 64 << 20 // a log streamed for its tail
	maxPages     = 20       // of a list, at perPage items each
	perPage      = 100
)

// client is the transport both forges share: URL building under the API
// root, the token header, redirects, bounded bodies and error mapping.
type client struct {
	kind  Kind
	base  *url.URL
	token string
	ua    string
	hc    *http.Client
}

func newClient(kind Kind, base *url.URL, token string, hc *http.Client, ua string) *client {
	own := &http.Client{}
	if hc != nil {
		*own = *hc
	}
	// net/http drops Authorization on a redirect to another host but not a
	// custom header such as GitLab's PRIVATE-TOKEN; refuse such redirects
	// outright instead of relying on which header is in use.
	own.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if req.URL.Scheme != base.Scheme || req.URL.Host != base.Host {
			return errors.New("redirect to another host refused")
		}
		return nil
	}
	return &client{kind: kind, base: base, token: token, ua: ua, hc: own}
}

// url joins the API root, an already escaped path and query.
func (c *client) url(path string, query url.Values) (*url.URL, error) {
	raw := c.base.String() + path
	if len(query) > 0 {
		raw += "?" + query.Encode()
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("forge: %s: bad request path: %w", c.kind, err)
	}
	return u, nil
}

// under reports whether u lies below the API root, so that a pagination
// link from the server cannot send the token elsewhere.
func (c *client) under(u *url.URL) bool {
	return u.Scheme == c.base.Scheme && u.Host == c.base.Host && u.User == nil &&
		(u.Path == c.base.Path || strings.HasPrefix(u.Path, c.base.Path+"/"))
}

// send performs one request and returns the response of a 2xx answer with
// its body open; any other answer becomes an *APIError.
func (c *client) send(ctx context.Context, op, method string, u *url.URL, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		buf, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("forge: %s: %s: %w", c.kind, op, err)
		}
		body = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("forge: %s: %s: %s", c.kind, op, safeText(c.token, err.Error()))
	}
	req.Header.Set("User-Agent", c.ua)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch c.kind {
	case GitHub:
		req.Header.Set("Accept", "application/vnd.github+json")
		req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
		req.Header.Set("Authorization", "Bearer "+c.token)
	case GitLab:
		req.Header.Set("Accept", "application/json")
		req.Header.Set("PRIVATE-TOKEN", c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("forge: %s: %s: %w", c.kind, op, ctxErr)
		}
		// A transport error quotes the URL: never the token, which is only
		// in a header, but the text is cleaned all the same.
		return nil, fmt.Errorf("forge: %s: %s: %s", c.kind, op, safeText(c.token, err.Error()))
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	ae := &APIError{Kind: c.kind, Op: op, Status: resp.StatusCode, Message: safeText(c.token, errorMessage(raw))}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		ae.Err = ErrUnauthorized
	case resp.StatusCode == http.StatusTooManyRequests,
		resp.StatusCode == http.StatusForbidden && resp.Header.Get("X-RateLimit-Remaining") == "0":
		ae.Err = ErrRateLimited
		ae.RetryAfter = retryAfter(resp.Header, time.Now())
	case resp.StatusCode == http.StatusForbidden:
		ae.Err = ErrForbidden
	case resp.StatusCode == http.StatusNotFound:
		ae.Err = ErrNotFound
	}
	return nil, ae
}

// do sends one request and decodes a JSON answer into out (when non-nil).
func (c *client) do(ctx context.Context, op, method, path string, query url.Values, in, out any) error {
	u, err := c.url(path, query)
	if err != nil {
		return err
	}
	resp, err := c.send(ctx, op, method, u, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = c.decode(op, resp, out)
	return err
}

// decode reads a bounded body into out and returns the raw bytes.
func (c *client) decode(op string, resp *http.Response, out any) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("forge: %s: %s: reading the answer: %s", c.kind, op, safeText(c.token, err.Error()))
	}
	if len(raw) > maxBody {
		return nil, fmt.Errorf("forge: %s: %s: the answer is larger than %d bytes", c.kind, op, maxBody)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("forge: %s: %s: unexpected answer: %s", c.kind, op, safeText(c.token, err.Error()))
		}
	}
	return raw, nil
}

// pages GETs a list, following rel="next" links (both forges send them),
// and hands each page's body to each. It stops after maxPages pages or
// when each returns done.
func (c *client) pages(ctx context.Context, op, path string, query url.Values, each func(raw []byte) (done bool, err error)) error {
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("per_page", fmt.Sprint(perPage))
	u, err := c.url(path, q)
	if err != nil {
		return err
	}
	for range maxPages {
		resp, err := c.send(ctx, op, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		raw, err := c.decode(op, resp, nil)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if done, err := each(raw); err != nil || done {
			return err
		}
		next := nextLink(resp.Header.Values("Link"))
		if next == "" {
			return nil
		}
		if u, err = url.Parse(next); err != nil || !c.under(u) {
			return fmt.Errorf("forge: %s: %s: the next page's link leaves the API root", c.kind, op)
		}
	}
	return nil
}

// nextLink returns the rel="next" target of RFC 8288 Link header values.
func nextLink(values []string) string {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			target, params, ok := strings.Cut(part, ";")
			if !ok {
				continue
			}
			target = strings.TrimSpace(target)
			if !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for p := range strings.SplitSeq(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "rel") && slices.ContainsFunc(strings.Fields(strings.Trim(val, `"`)), isNext) {
					return target[1 : len(target)-1]
				}
			}
		}
	}
	return ""
}

func isNext(rel string) bool { return strings.EqualFold(rel, "next") }

// tail GETs a text body and keeps its last max bytes, reading at most
// maxLogRead; a longer log is cut at that point and says so.
func (c *client) tail(ctx context.Context, op, path string, max int) (string, error) {
	u, err := c.url(path, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.send(ctx, op, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	buf := make([]byte, 0, 2*max)
	chunk := make([]byte, 32<<10)
	read := 0
	for read < maxLogRead {
		n, err := resp.Body.Read(chunk)
		read += n
		buf = append(buf, chunk[:n]...)
		if len(buf) > max {
			// Slide rather than grow: only the end is kept.
			buf = append(buf[:0], buf[len(buf)-max:]...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("forge: %s: %s: reading the log: %s", c.kind, op, safeText(c.token, err.Error()))
		}
	}
	// Do not start inside a UTF-8 sequence the cut split.
	for len(buf) > 0 && !utf8.RuneStart(buf[0]) {
		buf = buf[1:]
	}
	out := string(buf)
	if c.token != "" {
		out = strings.ReplaceAll(out, c.token, redacted)
	}
	if read >= maxLogRead {
		out += fmt.Sprintf("\n[log longer than %d MB; this excerpt is not its end]", maxLogRead>>20)
	}
	return out, nil
}

// errorMessage extracts the forge's explanation from an error body: GitHub
// {"message", "errors": [{"message"}]}, GitLab {"message": string, list or
// object} or {"error", "error_description"}.
func errorMessage(raw []byte) string {
	var body struct {
		Message json.RawMessage `json:"message"`
		Error   string          `json:"error"`
		Desc    string          `json:"error_description"`
		Errors  []struct {
			Message string `json:"message"`
			Code    string `json:"code"`
		} `json:"errors"`
	}
	if json.Unmarshal(raw, &body) != nil {
		if utf8.Valid(raw) && !bytes.Contains(raw, []byte("<")) {
			return string(raw) // a plain-text answer, not an HTML page
		}
		return ""
	}
	var parts []string
	var s string
	if json.Unmarshal(body.Message, &s) == nil {
		parts = append(parts, s)
	} else if len(body.Message) > 0 && string(body.Message) != "null" {
		parts = append(parts, string(body.Message))
	}
	for _, e := range body.Errors {
		parts = append(parts, strings.TrimSpace(e.Message+" "+e.Code))
	}
	parts = append(parts, body.Error, body.Desc)
	var kept []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "; ")
}

// findComment pages through a list of comments (both forges name the text
// "body") and reports whether one holds marker.
func findComment(ctx context.Context, c *client, op, path, marker, author string) (bool, error) {
	found := false
	err := c.pages(ctx, op, path, nil, func(raw []byte) (bool, error) {
		// GitHub names the writer in user.login, GitLab in author.username.
		var page []struct {
			Body string `json:"body"`
			User struct {
				Login string `json:"login"`
			} `json:"user"`
			Author struct {
				Username string `json:"username"`
			} `json:"author"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return true, fmt.Errorf("forge: %s: %s: unexpected answer: %w", c.kind, op, err)
		}
		for _, cm := range page {
			by := cm.User.Login
			if c.kind == GitLab {
				by = cm.Author.Username
			}
			if strings.EqualFold(by, author) && strings.Contains(cm.Body, marker) {
				found = true
				return true, nil
			}
		}
		return len(page) == 0, nil
	})
	return found, err
}
