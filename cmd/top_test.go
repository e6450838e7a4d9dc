package cmd

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestTopFlags(t *testing.T) {
	f := &Factory{IO: IOStreams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}}
	var got *TopOptions
	c := NewCmdTop(f, func(o *TopOptions) error { got = o; return nil })
	c.SetArgs([]string{"--server", "http://127.0.0.1:9999", "-c", "x.yaml"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Admin.Server != "http://127.0.0.1:9999" || got.Admin.Config != "x.yaml" {
		t.Errorf("flags: %+v", got.Admin)
	}
}

func TestTopNeedsTerminal(t *testing.T) {
	opts := &TopOptions{IO: IOStreams{IsTTY: false}}
	err := topRun(t.Context(), opts)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "needs a terminal") {
		t.Errorf("want a usage error about the terminal, got %v", err)
	}
}
