//go:build linux && !ccload_portable && !race

package engine

import (
	"syscall"
	"unsafe"
)

// sockRead and sockWrite are read(2) and write(2) on a non-blocking
// socket, made without entering the scheduler's system-call state
// (rawSock says why).
func sockRead(fd uintptr, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func sockWrite(fd uintptr, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
