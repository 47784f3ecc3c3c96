package policy

import (
	"path"
	"strings"
)

// matchGlob reports whether name matches pattern, where pattern segments are
// path.Match patterns and a `**` segment matches any number of segments
// (zero included), so `docs/**` matches `docs/a/b.md`.
func matchGlob(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(name); i++ {
				if matchSegs(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// pathForms returns the forms a path subject is matched in: the cleaned path
// itself and, when it lies under workdir, its workdir-relative form, so
// `Edit(docs/**)` also matches `/srv/app/docs/a.md`.
func pathForms(p, workdir string) []string {
	p = strings.ReplaceAll(p, "\\", "/")
	clean := path.Clean(p)
	forms := []string{clean}
	if workdir == "" {
		return forms
	}
	wd := path.Clean(workdir)
	if path.IsAbs(clean) {
		if rel, ok := strings.CutPrefix(clean, wd+"/"); ok {
			forms = append(forms, rel)
		} else if clean == wd {
			forms = append(forms, ".")
		}
	} else if path.IsAbs(wd) {
		forms = append(forms, path.Join(wd, clean))
	}
	return forms
}

// matchPath matches a glob against a path subject. An absolute glob matches
// absolute forms, a relative glob relative forms. When broad is set (deny and
// ask rules, where matching too much is the safe error) a relative glob also
// matches any trailing part of an absolute path, so `Edit(.git/**)` catches
// `/somewhere/.git/config` even when the workspace is unknown.
func matchPath(glob, p, workdir string, broad bool) bool {
	absGlob := path.IsAbs(glob)
	for _, f := range pathForms(p, workdir) {
		if path.IsAbs(f) != absGlob {
			if broad && !absGlob && path.IsAbs(f) {
				for i := 0; i < len(f); i++ {
					if f[i] == '/' && i+1 < len(f) && matchGlob(glob, f[i+1:]) {
						return true
					}
				}
			}
			continue
		}
		if matchGlob(glob, f) {
			return true
		}
	}
	return false
}
