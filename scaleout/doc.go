// Package scaleout holds the tests of several `ccload serve` processes (the
// built binary) sharing one PostgreSQL or MySQL database, as a scale-out
// deployment runs them (storage.shared, docs in README "Scale-out"). Each
// test creates a database of its own on the servers CCLOAD_TEST_POSTGRES and
// CCLOAD_TEST_MYSQL name and drops it afterwards.
package scaleout
