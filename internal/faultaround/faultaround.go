// Package faultaround keeps the kernel from mapping the binary's code and
// read-only data 64 KiB at a time. Importing it is all it takes: its
// initialisation does the work, before most of the program's packages
// initialise.
//
// On a page fault in a file mapping, Linux maps up to 16 pages around the
// faulting one that are already in the page cache ("fault-around"). For a
// 35 MB Go binary whose ~200 packages each run a little initialisation
// code scattered over the file, that makes ~16 MB of resident file pages
// out of what a few hundred faults touched; a `reasonix run` then counts
// them in its RSS. madvise(MADV_RANDOM) does not turn fault-around off;
// a userfaultfd registration does (the kernel skips fault-around for any
// range registered for write-protection, to keep per-page semantics). With
// UFFD_FEATURE_WP_ASYNC (Linux 6.7) the registration is allowed on a file
// mapping and needs no handler: nothing is ever write-protected, and the
// binary's read-only mappings cannot be written anyway. Each fault then
// maps the one page it needs.
//
// Everything is best effort: on an older kernel, where userfaultfd is
// refused (a seccomp profile, vm.unprivileged_userfaultfd with no
// user-mode-only support), or on another system, nothing changes. The
// descriptor stays open for the life of the process (closing it would
// undo the registration); it is close-on-exec, so no child inherits it.
package faultaround

// Registered reports how many of the binary's mappings were registered at
// start (0 when the kernel refused or on another system), for tests and
// diagnostics.
func Registered() int { return registered }

var registered int

func init() { registered = register() }
