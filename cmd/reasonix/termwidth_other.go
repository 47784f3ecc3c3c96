//go:build !(linux || darwin || freebsd || openbsd || netbsd)

package main

import "os"

// terminalColumns is 0 here: the width comes from COLUMNS or the default.
func terminalColumns(*os.File) int { return 0 }
