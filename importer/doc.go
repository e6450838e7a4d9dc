// Package importer converts other gateways' configuration into a ccload
// config file: ccLoad's channel CSV export and LiteLLM's proxy config.yaml.
//
// A reader (ReadCCLoadCSV, ReadLiteLLM, or Read, which detects the format)
// turns the input into a *Config: the channels, routing settings and prices
// ccload can express, plus notes for everything it cannot. Render writes a
// *Config as a complete ccload YAML document, with those notes as comments
// where they apply, and decides whether literal keys are written as they
// are or as ${VAR} references. Validate checks the result with the real
// config loader.
//
// Nothing here prints a key: notes name a key by its position, never by its
// value, and only Render's caller decides where literal keys may go.
package importer
