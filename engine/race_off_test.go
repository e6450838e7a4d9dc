//go:build !race

package engine_test

// raceEnabled: this test binary was built with -race.
const raceEnabled = false
