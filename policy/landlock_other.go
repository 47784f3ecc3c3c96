//go:build !linux

package policy

import "errors"

// landlockABI is 0: Landlock exists only on Linux.
func landlockABI() int { return 0 }

func tmpParent() string { return "" }

func restrictAndExec(execSpec) error { return errors.New("Landlock exists only on Linux") }
