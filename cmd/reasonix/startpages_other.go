//go:build !linux

package main

// releaseStartPages does nothing where the binary's pages are not dropped.
func releaseStartPages() {}
