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

// commit and date are set at build time (Makefile, Dockerfile):
// -ldflags "-X main.commit=… -X main.date=…". Without them `ccload version`
// falls back to the VCS stamp the go command records.
var commit, date string

func main() {
	os.Exit(cmd.Execute(cmd.Build{Commit: commit, Date: date, ExampleConfig: exampleConfig}))
}
