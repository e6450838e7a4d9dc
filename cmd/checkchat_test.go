package cmd

import (
	"strings"
	"testing"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// TestCheckChat: --chat sends the prompt to each selected channel × model
// through the request path of serve and prints the streamed answer; a
// channel that fails says why and fails the run.
func TestCheckChat(t *testing.T) {
	e := startCheckEnv(t)
	opts, out, _ := e.opts(false)
	opts.Channels = []string{"ok", "badkey"}
	opts.Chat = "Say hi to the test"
	err := checkRun(opts)
	if code := exitCode(t, err); code != exitFail {
		t.Errorf("exit %d (%v), want %d: badkey fails", code, err, exitFail)
	}
	got := out.String()
	for _, want := range []string{
		"== ok / m-ok\n" + mockupstream.DefaultText + "\n-- ok: 200 via anthropic (sk-g…cdef#",
		"== ok / alias\n" + mockupstream.DefaultText + "\n-- ok: 200",
		"== badkey / m-ok\n\n-- failed: 401",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "m-off") || strings.Contains(got, checkGoodKey) || strings.Contains(got, checkBadKey) {
		t.Errorf("output shows a disabled model or a key:\n%s", got)
	}
	n := 0
	for _, r := range e.mock.Requests() {
		if strings.Contains(string(r.Body), "Say hi to the test") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("the prompt reached the upstream %d times, want 3 (two ok models, one badkey)", n)
	}

	opts, _, _ = e.opts(false)
	opts.Chat, opts.JSON = "hi", true
	if code := exitCode(t, checkRun(opts)); code != exitUsage {
		t.Errorf("--chat --json: exit %d, want %d", code, exitUsage)
	}
}
