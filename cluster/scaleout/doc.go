// Package scaleout holds the tests of several `ccload serve` processes (the
// built binary) sharing one PostgreSQL or MySQL database, as a scale-out
// deployment runs them (docs/scale-out.md): instances
// started at once migrate once; an admin session opened on one works on
// another and a logout ends it there; each lists the others and drops one
// killed with SIGKILL within 30 s. Each test creates a database of its own
// on the servers CCLOAD_TEST_POSTGRES and CCLOAD_TEST_MYSQL name and drops
// it afterwards.
package scaleout
