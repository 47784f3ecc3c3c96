//go:build unix

package codeindex

import "syscall"

// cpuTime is the process's user plus system CPU time in nanoseconds: on a
// machine shared with other work it says what an operation costs better
// than the wall clock does.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
