package main

import "reasonix/policy"

// sandboxExec hands the process to the Landlock helper when it was started
// as one (`reasonix __sandbox-exec …`, see policy.SandboxExecMain): bash
// commands are re-executed through this binary, which restricts itself and
// then execs bash. It returns at once otherwise. The argument is hidden: it
// is no command, so help and completion never list it.
func sandboxExec() { policy.SandboxExecMain() }
