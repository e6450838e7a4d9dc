package securitytest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ccload/ccload/cmd"
)

// Finding: control characters from upstream errors reach the terminal raw
// in ccload logs (ESC[2J, an OSC title, CR/LF forging lines).
func TestLogsOutputIsTerminalSafe(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(500)
		fmt.Fprint(w, `{"type":"error","error":{"type":"api_error","message":"boom \u001b[2J\u001b]0;pwned\u0007\rFAKE 200 ok"}}`)
	}))
	t.Cleanup(up.Close)
	s := start(t, config("", up.URL, ""))
	if r, _ := do(t, "POST", s.URL+"/v1/messages", anthropicBody, map[string]string{"x-api-key": token}); r.StatusCode < 500 {
		t.Fatalf("status %d", r.StatusCode)
	}
	rows := s.logs(t, 1)
	if !strings.Contains(rows[0].Error, "\x1b") {
		t.Fatalf("the row should keep the upstream's text as it came (got %q)", rows[0].Error)
	}
	s.Stop()
	for _, tty := range []bool{true, false} {
		var out, errb bytes.Buffer
		f := &cmd.Factory{IO: cmd.IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb, IsTTY: tty}}
		root := cmd.NewRootCmd(f)
		root.SetArgs([]string{"logs", "--db", s.DB, "-c", s.File})
		root.SetOut(&out)
		root.SetErr(&errb)
		if err := root.Execute(); err != nil {
			t.Fatalf("logs: %v\n%s", err, errb.String())
		}
		all := out.String() + errb.String()
		if !strings.Contains(all, "boom") {
			t.Fatalf("tty=%v: no row printed:\n%s", tty, all)
		}
		if strings.ContainsAny(all, "\x1b\x07\r") {
			t.Errorf("tty=%v: raw control characters in the output: %q", tty, all)
		}
	}
}
