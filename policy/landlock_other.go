//go:build !linux

package policy

// landlockABI is 0: Landlock exists only on Linux.
func landlockABI() int { return 0 }

func tmpParent() string { return "" }
