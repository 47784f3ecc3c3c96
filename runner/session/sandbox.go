package session

import (
	"cmp"
	"fmt"
	"os"

	"reasonix/config"
	"reasonix/policy"
)

// SandboxStatus says how bash will be confined under set on this host: the
// sandbox kind ("landlock", "bwrap", or "" for none), and a warning for a
// person when bash runs unconfined or is refused ("" when it is
// sandboxed). The service logs it at start and doctor reports it.
func SandboxStatus(set *config.Config) (kind, warning string, err error) {
	dir, err := os.MkdirTemp("", "reasonix-sandbox-probe-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(dir)
	mode := cmp.Or(set.Sandbox.Bash, config.BashAuto)
	c, err := policy.NewConfinement(policy.SandboxConfig{WorkspaceRoot: dir, Bash: mode, Network: set.Sandbox.Network})
	if err != nil {
		return "", "", fmt.Errorf("[sandbox]: %w", err)
	}
	defer c.Close()
	switch kind = c.SandboxKind(); {
	case c.ShellRefused():
		warning = fmt.Sprintf("[sandbox] bash = %q but no OS sandbox works here (Landlock ABI 4+ or bubblewrap): every bash command will be refused", mode)
	case mode == config.BashOff:
		warning = "[sandbox] bash = \"off\": bash runs unconfined; --auto relies on the command analyser alone"
	case kind == "":
		warning = "no OS sandbox works here (Landlock ABI 4+ or bubblewrap): bash runs unconfined and --auto allows only commands proven to stay in the workspace"
	case !c.Supervised():
		warning = "the seccomp supervisor does not work here: sandboxed bash can reach UNIX sockets outside the workspace (such as /var/run/docker.sock) and deny rules are not checked at exec"
	}
	return kind, warning, nil
}
