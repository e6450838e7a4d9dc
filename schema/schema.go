// Package schema holds the JSON Schema (2020-12) of the ccload config file.
//
// Editors use it through the first line of the file:
//
//	# yaml-language-server: $schema=./schema/ccload.schema.json
//
// The config package's decoder is the authority on what a file may say; the
// tests of this package keep the schema in step with it (the same keys in
// every mapping, and every file of the config test corpus valid).
package schema

import _ "embed"

// JSON is the schema document, ccload.schema.json.
//
//go:embed ccload.schema.json
var JSON []byte
