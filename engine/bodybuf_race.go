//go:build race

package engine

// Under the race detector (make test) every body but an empty one goes
// through the pool, and a body given back is overwritten and never
// reused: a view of it kept past dropBody then reads '~' where the tests
// expect a model name, a session or a converted request (copyBody in
// request.go).
const pooledBodyMin = 1

const poisonBodies = true
