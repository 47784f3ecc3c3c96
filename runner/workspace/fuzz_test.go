package workspace

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzTaskID: an accepted task ID names exactly one directory directly
// under its parent, never escapes the root, and round-trips through its
// branch name.
func FuzzTaskID(f *testing.F) {
	for _, s := range []string{"t1", "0195f3c2-aaaa", "a_b-C", "", "..", "../x", "a/b", "a\x00b", "-", "é", strings.Repeat("z", 129)} {
		f.Add(s)
	}
	m := &Manager{root: "/data/workspaces"}
	f.Fuzz(func(t *testing.T, id string) {
		if validTaskID(id) != nil {
			if _, err := taskFromBranch(BranchFor(id)); err == nil {
				t.Fatalf("branch of rejected id %q accepted", id)
			}
			return
		}
		for _, dir := range []string{m.scratchDir(id), m.worktreeDir(id)} {
			if !m.within(dir) || filepath.Base(dir) != id || filepath.Dir(filepath.Dir(dir)) != m.root {
				t.Fatalf("id %q gives path %s outside its place under %s", id, dir, m.root)
			}
		}
		if !m.within(m.recordPath(id)) {
			t.Fatalf("record of %q escapes the root", id)
		}
		got, err := taskFromBranch(BranchFor(id))
		if err != nil || got != id {
			t.Fatalf("branch round trip of %q = %q, %v", id, got, err)
		}
	})
}

// FuzzSpecRepo: normalize never panics; an accepted URL uses a data-only
// transport and cannot be read as a git option; a local path comes back
// absolute.
func FuzzSpecRepo(f *testing.F) {
	for _, s := range []string{
		"/srv/repo", "repo", "./a:b", "https://github.com/a/b.git", "git@github.com:a/b.git",
		"ssh://git@host:22/x", "file:///tmp/x.git", "ext::sh -c evil", "fd::3", "-oProxyCommand=x:y",
		"HTTPS://h/x", "c:\\repo", "://", "x::y", "transport::address",
	} {
		f.Add(s, "main")
	}
	f.Fuzz(func(t *testing.T, repo, base string) {
		s, err := Spec{Name: "w", Repo: repo, Base: base}.normalize()
		if err != nil {
			return
		}
		if strings.HasPrefix(s.Base, "-") || s.Base == "" {
			t.Fatalf("accepted base %q", s.Base)
		}
		if !isURL(s.Repo) {
			if !filepath.IsAbs(s.Repo) {
				t.Fatalf("local repo %q not made absolute", s.Repo)
			}
			return
		}
		lower := strings.ToLower(s.Repo)
		if strings.HasPrefix(s.Repo, "-") || strings.HasPrefix(lower, "ext::") || strings.HasPrefix(lower, "fd::") {
			t.Fatalf("accepted dangerous repo %q", s.Repo)
		}
		if i := strings.Index(s.Repo, "::"); i >= 0 && !strings.Contains(s.Repo[:i], "://") && !strings.Contains(s.Repo, "://") {
			t.Fatalf("accepted a transport::address form %q", s.Repo)
		}
	})
}

// FuzzRedact: a password in a URL's userinfo never survives redaction,
// wherever the URL sits in a message.
func FuzzRedact(f *testing.F) {
	f.Add("https", "user", "hunter2", "fatal: could not read from ")
	f.Add("ssh", "git", "p@ss", "")
	f.Add("http", "", "tok", "x://")
	f.Add("A0000", "0", "0000", " ") // the secret repeats in the scheme
	f.Add("A000", "0", "000:", "0")  // or straddles the scheme and "://"
	f.Fuzz(func(t *testing.T, scheme, user, secret, prefix string) {
		if len(secret) < 4 || strings.ContainsAny(secret, "@/ \t\n\r\v\f\u0085\u00a0") || !isScheme(scheme) ||
			strings.ContainsAny(user, "@/ \t\n\r\v\f\u0085\u00a0") || strings.Contains(prefix, secret) || !validUTF8(secret+user) {
			return
		}
		// A secret that is also part of what stays visible (the scheme, the
		// host, the path) cannot tell a leak from a coincidence.
		if strings.Contains(scheme+"://***@host/repo.git tail", secret) {
			return
		}
		msg := prefix + " " + scheme + "://" + user + ":" + secret + "@host/repo.git tail"
		if out := redact(msg); strings.Contains(out, secret) {
			t.Fatalf("redact(%q) = %q keeps the secret", msg, out)
		}
	})
}

func isScheme(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func validUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// FuzzGitVersion: parsing never panics and reads what it was given.
func FuzzGitVersion(f *testing.F) {
	for _, s := range []string{"git version 2.39.5", "git version 2.39.5 (Apple Git-143)", "git version 2.45.windows.1", "git version ", "git version  ", "git version x.y", "hub version 2.14.2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		major, minor, ok := parseGitVersion(s)
		if ok && (major < 0 || minor < 0) {
			t.Fatalf("parseGitVersion(%q) = %d.%d", s, major, minor)
		}
	})
}

func TestParseGitVersion(t *testing.T) {
	for in, want := range map[string][3]int{
		"git version 2.39.5":                   {2, 39, 1},
		"git version 2.39.5 (Apple Git-143)\n": {2, 39, 1},
		"git version 1.8.3.1":                  {1, 8, 1},
		"git version ":                         {0, 0, 0},
		"git version 2":                        {0, 0, 0},
		"something else":                       {0, 0, 0},
	} {
		major, minor, ok := parseGitVersion(in)
		if got := [3]int{major, minor, map[bool]int{true: 1}[ok]}; got != want {
			t.Errorf("parseGitVersion(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestIsURL(t *testing.T) {
	for in, want := range map[string]bool{
		"/srv/repo": false, "relative/repo": false, "./a:b": false, "repo": false,
		"https://h/x": true, "git@github.com:a/b.git": true, "host:path": true, "file:///x": true,
	} {
		if got := isURL(in); got != want {
			t.Errorf("isURL(%q) = %v, want %v", in, got, want)
		}
	}
}
