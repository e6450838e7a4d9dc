//go:build race

package count

// raceEnabled skips the exhaustive library comparisons, ~10x slower under the
// race detector; the plain test run covers them.
const raceEnabled = true
