// Package config turns the YAML config file into a validated, immutable
// *Snapshot and keeps it current while the file changes.
//
// Parse and Load decode the file into a yaml.Node tree and walk it by hand,
// so every problem carries its file:line:col and all problems are reported
// at once (Problems). Unknown keys are errors, with a suggestion. Defaults
// are the named values DefaultServer, DefaultStorage, DefaultRouting,
// DefaultChannel and DefaultCheck, applied before a section is decoded.
//
// # Expansion
//
// Every string value is expanded after parsing, one scalar at a time, so a
// value can never change the structure of the document and positions stay
// true:
//
//	${VAR}               the environment variable; an error when unset
//	${VAR:-default}      the default when VAR is unset or empty (the default
//	                     may itself use ${...})
//	${file:PATH}         the file's contents without trailing newlines
//	                     (Docker and Kubernetes secrets); a relative PATH is
//	                     resolved from the config file's directory
//	${file:PATH:-default} the default when the file cannot be read
//	$$                   a literal $
//
// Any other "$" is kept as written, so "pa$word" needs no escaping. Keys are
// never expanded. A number or boolean field takes an expansion that reads as
// one: `priority: ${PRIO:-10}`.
//
// # Reload
//
// Source holds the current Snapshot behind an atomic pointer. Reload (which
// the caller wires to SIGHUP and to the admin API) and Watch (fsnotify on the
// file's directory) build a new Snapshot and swap it in; a file that fails to
// build leaves the old one serving and the error in Status.
package config
