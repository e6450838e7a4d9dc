//go:build !unix

package main

// raiseNoFile has nothing to raise where there is no RLIMIT_NOFILE.
func raiseNoFile() {}

// noFile is a limit no run reaches: Windows caps handles far above it.
func noFile() int { return 1 << 20 }
