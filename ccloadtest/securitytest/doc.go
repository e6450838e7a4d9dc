// Package securitytest holds the security suite: each test
// plays a hostile or careless client (or a leaky upstream) against the real
// `ccload serve` on a loopback port and checks one finding of the review
// stays fixed. The package has no code outside its tests.
package securitytest
