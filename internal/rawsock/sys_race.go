//go:build linux && !ccload_portable && race

package rawsock

import "syscall"

// Under the race detector the socket calls are syscall.Read and Write,
// whose annotations make a write to one socket happen before the read of
// it at the other end, as tests that hand data across a socket expect.
// The raw calls (sys_norace.go) carry none.

// ReadFD is read(2) on a non-blocking socket.
func ReadFD(fd uintptr, p []byte) (int, error) { return syscall.Read(int(fd), p) }

// WriteFD is write(2) on a non-blocking socket.
func WriteFD(fd uintptr, p []byte) (int, error) { return syscall.Write(int(fd), p) }
