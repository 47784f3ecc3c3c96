package main

import "reasonix/policy"

// sandboxExec hands the process to the sandbox's supervisor proxy when it
// was started as one (`reasonix __sandbox-supervise`, see
// policy.SandboxExecMain), or runs `reasonix acp attach` (acpAttachExec),
// which an editor's terminal runs and which needs neither the
// configuration nor the secrets. It returns at once otherwise. Both are
// hidden: help and completion never list them.
func sandboxExec() {
	policy.SandboxExecMain()
	acpAttachExec()
}
