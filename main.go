package main

import (
	_ "embed"
	"os"

	"github.com/ccload/ccload/cmd"
)

// exampleConfig is what `ccload init` writes, so a binary installed without
// the repository (Docker image, go install) still has a starter config.
//
//go:embed ccload.example.yaml
var exampleConfig []byte

// version, commit and date are set at build time (Makefile, Dockerfile):
// -ldflags "-X main.version=… -X main.commit=… -X main.date=…". Without
// them `ccload version` falls back to what the go command records: the
// module version for `go install …@vX`, and the VCS revision and time for
// a build inside a checkout.
var version, commit, date string

func main() {
	os.Exit(cmd.Execute(cmd.Build{Version: version, Commit: commit, Date: date, ExampleConfig: exampleConfig}))
}
