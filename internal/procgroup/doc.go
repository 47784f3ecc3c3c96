// Package procgroup starts commands detached in their own session and
// process group, and kills such a group as a whole: nothing a shell command,
// a setup step or a git call starts may outlive it.
package procgroup
