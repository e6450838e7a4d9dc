//go:build linux && !ccload_portable && !race

package rawsock

import (
	"syscall"
	"unsafe"
)

// ReadFD is read(2) on a non-blocking socket, made without entering the
// scheduler's system-call state (Conn says why).
func ReadFD(fd uintptr, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// WriteFD is write(2) on a non-blocking socket, as ReadFD.
func WriteFD(fd uintptr, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
