//go:build !unix

package workspace

import "context"

// lockFile is the in-process lock alone where there is no flock: nodes
// sharing one repository directory need a Unix system.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
