// Package clients holds the end-to-end tests that drive the real agent CLIs
// (Claude Code, Codex CLI, Gemini CLI) through a built `ccload serve` to the
// mock upstream in each of the four upstream families, one text turn and one
// tool turn per client and family, plus Codex in code mode. Beside them:
// agents failing over mid tool loop (failover_test.go), and the Codex CLI
// through a subscription account channel to the mock Codex backend, the
// account signed in with `ccload login codex --import` (account_test.go).
//
// The tests are behind the build tag "clients" because they need the CLIs,
// which clients/install.sh installs from npm into a cache outside the
// repository. `make test-clients` installs them, builds ccload and runs
// the tests; a missing CLI there is a failure, not a skip.
//
//	CCLOAD_CLIENTS_DIR     the npm prefix holding the CLIs (install.sh prints it)
//	CCLOAD_BIN             the ccload binary to serve with (built when unset)
//	CCLOAD_CLIENTS_RECORD  when 1, the request bodies the CLIs send are
//	                       written, scrubbed, to protocol/convert/testdata/real/
//
// Each run is a subtest named client/family/turn (go test -run selects them)
// and they run -parallel at a time; the test prints a results table.
package clients
