package builtin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"reasonix/agent"
)

// A file tool that changes a file in place (edit_file, multi_edit,
// write_file over an existing file, move_file, delete_range, delete_symbol) first asks checkSeen whether
// the run has seen the file's current version; every tool that reads or
// writes a file records the version it saw (sawFile). See agent.Observed.

func init() {
	for _, name := range []string{"read_file", "edit_file", "multi_edit", "write_file", "delete_range", "delete_symbol"} {
		agent.RegisterReobserver(name, reobservePath("path"))
	}
	agent.RegisterReobserver("move_file", reobservePath("new_path"))
}

// checkSeen refuses to change path (resolved; shown to the model as name)
// unless the run has seen its current version. A file that does not exist
// needs no reading.
func checkSeen(tool string, env agent.ToolEnv, name, path string) error {
	if env.Observed == nil {
		return nil
	}
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	seen, ok := env.Observed.Seen(path)
	switch {
	case !ok:
		return fmt.Errorf("%s: %s has not been read in this task; read it (any part of it) with read_file first, then make the change", tool, name)
	case seen != versionOf(info):
		return fmt.Errorf("%s: %s changed on disk since this task last read it; read it again with read_file, then make the change", tool, name)
	}
	return nil
}

// sawFile records that the run has seen path as it is now (after the tool's
// own write, say). A file that cannot be read is left out: nothing was seen.
func sawFile(env agent.ToolEnv, path string) {
	if env.Observed == nil {
		return
	}
	if info, err := os.Lstat(path); err == nil {
		env.Observed.Saw(path, versionOf(info))
	}
}

// reobservePath records the file a stored call named in its argument key.
func reobservePath(key string) func(agent.ToolEnv, json.RawMessage) {
	return func(env agent.ToolEnv, args json.RawMessage) {
		var a map[string]any
		if json.Unmarshal(args, &a) != nil {
			return
		}
		name, _ := a[key].(string)
		if p, err := readPath("reobserve", env, name); err == nil {
			sawFile(env, p)
		}
	}
}
