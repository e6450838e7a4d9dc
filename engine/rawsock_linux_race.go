//go:build linux && !ccload_portable && race

package engine

import "syscall"

// Under the race detector the socket calls are syscall.Read and Write,
// whose annotations make a write to one socket happen before the read of
// it at the other end, as tests that hand data across a socket expect.
// The raw calls (rawsock_sys.go) carry none.
func sockRead(fd uintptr, p []byte) (int, error) { return syscall.Read(int(fd), p) }

func sockWrite(fd uintptr, p []byte) (int, error) { return syscall.Write(int(fd), p) }
