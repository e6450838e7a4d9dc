package main

import (
	"os"

	"ccload/cmd"
)

func main() { os.Exit(cmd.Execute()) }
