//go:build unix

package main

import "syscall"

// raiseNoFile lifts the open-file limit as far as the hard limit (or, as
// root, further): 10,000 streams through a gateway hold four sockets each
// across the three processes. Children inherit it.
func raiseNoFile() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return
	}
	want := uint64(200000)
	if l.Max < want {
		l2 := syscall.Rlimit{Cur: want, Max: want}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l2) == nil {
			return
		}
	}
	l.Cur = min(want, l.Max)
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l) // best effort: errors show as failed streams
}

// noFile is the open-file limit in force.
func noFile() int {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil {
		return 1024
	}
	return int(l.Cur)
}
