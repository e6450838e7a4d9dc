// Package soak holds `make soak`: a randomised-fault run of the real
// `ccload serve` binary against the mock upstream, with concurrent clients
// of all four families, a config reload and a SIGTERM with streams open.
//
// The run lives in test files behind the `soak` build tag, so `go test ./...`
// and `make test` never start it. See docs/operations.md, "Soak", for
// what it measures and the invariants it enforces.
package soak
