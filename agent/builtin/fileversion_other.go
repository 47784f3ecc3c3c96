//go:build !linux

package builtin

import (
	"os"

	"reasonix/agent"
)

// versionOf is the version of the file info describes: its size and
// modification time, all this platform's stat gives portably.
func versionOf(info os.FileInfo) agent.FileVersion {
	return agent.FileVersion{Size: info.Size(), ModTime: info.ModTime().UnixNano()}
}
