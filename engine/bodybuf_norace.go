//go:build !race

package engine

// pooledBodyMin is the smallest body copied into a pooled buffer: below
// it an allocation costs less than the pool.
const pooledBodyMin = 16 << 10

// poisonBodies: see bodybuf_race.go.
const poisonBodies = false
