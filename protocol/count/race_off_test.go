//go:build !race

package count

const raceEnabled = false
