// Package docscheck keeps the documentation in step with the code: the
// configuration reference (docs/configuration.md) with the JSON Schema of
// the config file, and README's layout table with the packages that exist.
// Its tests fail when they disagree; `go test ./internal/docscheck -update`
// rewrites the generated parts of the reference.
package docscheck
