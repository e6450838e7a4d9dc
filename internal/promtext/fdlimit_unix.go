//go:build unix

package promtext

import "syscall"

// maxFDs is the soft open-file limit (RLIMIT_NOFILE), which every Unix
// has, macOS included.
func maxFDs() (uint64, bool) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, false
	}
	return uint64(lim.Cur), true
}
