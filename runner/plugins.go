package runner

import (
	"slices"

	"reasonix/config"
	"reasonix/runner/store"
)

// taskPlugins lists the MCP servers of a task: the service's [[plugins]],
// plus those the repository declares in its own .mcp.json when both
// [serve] allow_workspace_plugins and the workspace's plugins_from_workspace
// allow it. A service entry wins a name collision; a broken .mcp.json is
// logged and ignored rather than failing the task.
func (s *Service) taskPlugins(task store.Task, dir string) []config.Plugin {
	plugins := s.set.Plugins
	if !s.set.Serve.AllowWorkspacePlugins || task.Workspace == "" {
		return plugins
	}
	allowed := false
	for _, w := range s.set.Workspaces {
		allowed = allowed || w.Name == task.Workspace && w.PluginsFromWorkspace
	}
	if !allowed {
		return plugins
	}
	own, err := config.WorkspacePlugins(dir, nil)
	if err != nil {
		s.log.Warn("runner: the workspace's .mcp.json is ignored", "task", task.ID, "err", err)
		return plugins
	}
	merged := slices.Clone(plugins)
	for _, p := range own {
		if !slices.ContainsFunc(plugins, func(q config.Plugin) bool { return q.Name == p.Name }) {
			merged = append(merged, p)
		}
	}
	return merged
}
