// Package adminapi is the admin API as a client sees it: the JSON bodies of
// every /admin/ endpoint and the Go Client that `ccload channels|tokens|logs|top`
// use. It imports nothing of the gateway (no engine, no store), so the CLI
// commands that talk to a running server, and `ccload top` in particular,
// build without the request path. The server side (handlers, metrics, the
// event bus) is package admin, which fills these types in.
//
// The API is stable and additive; admin/API.md documents every endpoint and
// field.
package adminapi
