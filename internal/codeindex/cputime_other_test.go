//go:build !unix

package codeindex

func cpuTime() int64 { return 0 }
