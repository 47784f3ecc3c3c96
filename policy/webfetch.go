package policy

import (
	"net/url"
	"strings"
)

// familyWebFetch is the web_fetch tool's rule family: `WebFetch` alone,
// or `WebFetch(domain:example.com)`, which covers the host example.com and
// every name below it (docs.example.com), and `WebFetch(domain:*.example.com)`,
// only the names below it.
const familyWebFetch = "WebFetch"

// webFetchTool is the tool the family covers.
const webFetchTool = "web_fetch"

// maxDomain bounds a domain in a rule (a DNS name is at most 253 bytes).
const maxDomain = 253

// parseDomainSpec parses the specifier of a WebFetch rule: domain:HOST,
// HOST a lower-case DNS name or IP literal, optionally *.-prefixed.
func parseDomainSpec(spec string, bad func(string, ...any) (Rule, error)) (Rule, error) {
	host, ok := strings.CutPrefix(spec, "domain:")
	if !ok {
		return bad("a WebFetch rule names a domain: WebFetch(domain:example.com)")
	}
	host = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
	name := strings.TrimPrefix(host, "*.")
	if name == "" || len(host) > maxDomain {
		return bad("empty or overlong domain")
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" {
			return bad("domain %q has an empty label", host)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':') {
				return bad("domain %q contains %q; use a host name such as docs.example.com", host, c)
			}
		}
	}
	return Rule{family: familyWebFetch, kind: kindDomain, spec: host}, nil
}

// hostOf returns the lower-case host of a URL without a trailing dot, as
// web_fetch connects to it; "" when the URL has none.
func hostOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// matchDomain matches a domain rule against the call's host. A call whose
// URL has no host is matched by deny and ask rules (broad: the safe
// mistake) and by no allow rule.
func (r *Rule) matchDomain(sub subject, broad bool) bool {
	if !sub.hasURL {
		return false
	}
	if sub.host == "" {
		return broad
	}
	if name, ok := strings.CutPrefix(r.spec, "*."); ok {
		return strings.HasSuffix(sub.host, "."+name)
	}
	return sub.host == r.spec || strings.HasSuffix(sub.host, "."+r.spec)
}
