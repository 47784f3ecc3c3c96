package config

import "strings"

// checkCommand validates the command and args keys of a [[schedules]] or
// [[webhooks]] entry. The command itself is looked up when the entry
// fires: it lives in the workspace's repository, which can change.
func checkCommand(p *problems, src, label, command string, args []string) {
	name := strings.TrimPrefix(command, "/")
	if command == "" {
		if len(args) > 0 {
			p.add(src, label+".args", "is set without command")
		}
		return
	}
	ok := name != "" && len(name) <= 200
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':'
	}
	if !ok {
		p.add(src, label+".command", "%q is not a command name such as \"review\" or \"git:commit\"", command)
	}
	if len(args) > 64 {
		p.add(src, label+".args", "has %d entries; at most 64 are accepted", len(args))
	}
}
