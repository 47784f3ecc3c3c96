package policy

import (
	"os"
	"path/filepath"
	"slices"
	"time"
)

// cover is a grant of everything beneath root except the hidden paths,
// expressed the only way Landlock can express it: as grants on whole
// subtrees that contain no hidden path (dirs, files) plus the directories
// on the way down to a hidden path (walked), which are granted on their
// own and not on their content.
type cover struct {
	dirs   []string
	files  []string
	walked []string
	// stamps are the walked directories' modification times, taken
	// before they were listed: while none changed, the cover still
	// describes the tree (an entry added or removed changes its
	// directory's time).
	stamps []time.Time
	// unlisted are walked directories not granted listing either: a
	// grant to list a directory covers every directory beneath it.
	unlisted []string
}

// listed are the walked directories granted listing.
func (c *cover) listed() []string {
	if len(c.unlisted) == 0 {
		return c.walked
	}
	var l []string
	for _, w := range c.walked {
		if !slices.Contains(c.unlisted, w) {
			l = append(l, w)
		}
	}
	return l
}

// coverOf computes the cover of root minus hidden (absolute, resolved).
// A directory that cannot be listed contributes nothing beneath it, and
// symbolic links on the way are skipped (a grant would follow them): what
// they point to is granted, or not, where it really lives.
func coverOf(root string, hidden []string) cover {
	var c cover
	c.add(root, hidden, true)
	return c
}

// current reports whether no walked directory changed since the cover was
// computed.
func (c *cover) current() bool {
	for i, p := range c.walked {
		fi, err := os.Stat(p)
		if err != nil || c.stamps[i].IsZero() || !fi.ModTime().Equal(c.stamps[i]) {
			return false
		}
	}
	return true
}

func (c *cover) add(p string, hidden []string, isDir bool) {
	below := false
	for _, h := range hidden {
		if h == p || within(p, h) {
			return // hidden itself, or beneath a hidden directory
		}
		if within(h, p) {
			below = true
		}
	}
	switch {
	case !below && isDir:
		c.dirs = append(c.dirs, p)
	case !below:
		c.files = append(c.files, p)
	default:
		var stamp time.Time
		if fi, err := os.Stat(p); err == nil {
			stamp = fi.ModTime()
		}
		c.walked = append(c.walked, p)
		c.stamps = append(c.stamps, stamp)
		entries, err := os.ReadDir(p)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Type()&os.ModeSymlink != 0 {
				continue
			}
			c.add(filepath.Join(p, e.Name()), hidden, e.IsDir())
		}
	}
}
