package main

import "reasonix/policy"

// sandboxExec hands the process to the sandbox's supervisor proxy when it
// was started as one (`reasonix __sandbox-supervise`, see
// policy.SandboxExecMain). It returns at once otherwise. The argument is
// hidden: it is no command, so help and completion never list it.
func sandboxExec() { policy.SandboxExecMain() }
