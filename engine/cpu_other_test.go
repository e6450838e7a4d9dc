//go:build !unix

package engine_test

import (
	"testing"
	"time"
)

// processCPU is zero where the platform has no getrusage (Windows): the
// cpu-ns/op metric then reads 0 and only ns/op means anything.
func processCPU(testing.TB) time.Duration { return 0 }
