package securitytest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/cmd"
)

const (
	urlPassword = "urlpw-Hq2x9Vb7Lk"
	urlQueryKey = "qkey-Rt5y8Uo3Pz"
)

// Finding: credentials inside channel URLs (?key=…, user:pass@) are stored
// in clear in request_logs.url, attempts_json and cooldowns.url, and
// printed by ccload check TSV/JSON.
func TestURLCredentialsAreMasked(t *testing.T) {
	m := mockupstream.New(mockupstream.Options{})
	up, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	sum := sha256.Sum256([]byte(token))
	dead := "http://ops:" + urlPassword + "@127.0.0.1:1/v1/messages?key=" + urlQueryKey
	live := strings.Replace(up, "http://", "http://ops:"+urlPassword+"@", 1) + "/v1/messages?key=" + urlQueryKey
	yaml := `version: 1
server: {listen: "127.0.0.1:0", admin_password: "` + adminPassword + `"}
storage: {driver: sqlite, dsn: "{{DB}}"}
channels:
  - name: a
    urls:
      - {url: "` + dead + `", exact: true, protocols: [anthropic]}
      - {url: "` + live + `", exact: true, protocols: [anthropic]}
    keys: [` + channelKey + `]
    models: [claude-x]
tokens:
  - {name: t, token_sha256: ` + hex.EncodeToString(sum[:]) + `}
`
	s := start(t, yaml)
	resp, body := do(t, "POST", s.URL+"/v1/messages", anthropicBody, map[string]string{"x-api-key": token})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	rows := s.logs(t, 1)
	if !strings.Contains(rows[0].URL, "127.0.0.1") {
		t.Fatalf("row url %q does not name the host", rows[0].URL)
	}
	cds := s.cooldowns(t, 1)
	if !strings.Contains(cds[0].URL, "127.0.0.1:1") {
		t.Fatalf("cooldown url %q does not name the host", cds[0].URL)
	}
	s.Stop()
	if l := s.leaks(t, urlPassword, urlQueryKey); len(l) > 0 {
		t.Errorf("leaked: %v", l)
	}

	for _, args := range [][]string{{"check", "-c", s.File}, {"check", "-c", s.File, "--json"}} {
		var out, errb bytes.Buffer
		f := &cmd.Factory{IO: cmd.IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb}}
		root := cmd.NewRootCmd(f)
		root.SetArgs(args)
		root.SetOut(&out)
		root.SetErr(&errb)
		root.Execute() // a failed probe fails the run; the output is what matters
		all := out.String() + errb.String()
		if !strings.Contains(all, "127.0.0.1") {
			t.Fatalf("%v printed no probe:\n%s", args, all)
		}
		if strings.Contains(all, urlPassword) || strings.Contains(all, urlQueryKey) {
			t.Errorf("%v prints URL credentials:\n%s", args, all)
		}
	}
}
