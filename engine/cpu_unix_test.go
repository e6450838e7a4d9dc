//go:build unix

package engine_test

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the user plus system time the process has used.
func processCPU(b testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
