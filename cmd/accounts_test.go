package cmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/ccload/ccload/ccloadtest/wait"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/engine/account"
	"github.com/ccload/ccload/store"
)

const acctSecretKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

// acctEnv is a config with a Codex account channel (alice, bob) and an xAI
// one (grok: carol) pointing at the mock sign-in server and the mock Codex
// backend, and a plain key channel as a fallback that must stay unused.
type acctEnv struct {
	signin   *mockupstream.SignIn
	backend  *mockupstream.CodexBackend
	issuer   string
	file, db string
	outputs  *syncBuffer // everything the commands and the server printed
}

func newAcctEnv(t *testing.T, ttl time.Duration) *acctEnv { return newAcctEnvOn(t, ttl, "") }

// newAcctEnvOn is newAcctEnv with a storage: section ("" = a SQLite file).
func newAcctEnvOn(t *testing.T, ttl time.Duration, storage string) *acctEnv {
	e := &acctEnv{signin: &mockupstream.SignIn{AccessTTL: ttl}, outputs: &syncBuffer{}}
	si := httptest.NewServer(e.signin)
	t.Cleanup(si.Close)
	e.issuer = si.URL
	e.backend = &mockupstream.CodexBackend{SignIn: e.signin, Inner: mockupstream.New(mockupstream.Options{})}
	be := httptest.NewServer(e.backend)
	t.Cleanup(be.Close)
	dir := t.TempDir()
	e.db = filepath.Join(dir, "ccload.db")
	e.file = filepath.Join(dir, "ccload.yaml")
	sum := sha256.Sum256([]byte("sk-client-token"))
	if storage == "" {
		storage = `{driver: sqlite, dsn: "` + e.db + `"}`
	}
	yaml := `version: 1
server: {listen: "127.0.0.1:0", admin_password: pw, secret_key: ` + acctSecretKey + `}
storage: ` + storage + `
channels:
  - name: chatgpt
    oauth: codex
    oauth_issuer: ` + si.URL + `
    urls: ["` + be.URL + `/backend-api/codex"]
    accounts: [alice, bob]
    priority: 10
    affinity: false # round robin over the accounts, not a pinned session
    models: [gpt-5.4]
  - name: grok
    oauth: xai
    oauth_issuer: ` + si.URL + `
    oauth_client_id: xai-test-client
    urls: [{url: "` + be.URL + `", protocols: [responses]}]
    accounts: [carol]
    models: [grok-x]
tokens:
  - {name: t, token_sha256: ` + hex.EncodeToString(sum[:]) + `}
`
	if err := os.WriteFile(e.file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *acctEnv) io(in string) IOStreams {
	return IOStreams{In: strings.NewReader(in), Out: e.outputs, Err: e.outputs}
}

func (e *acctEnv) login(t *testing.T, o LoginOptions) {
	t.Helper()
	o.IO, o.Config = e.io(""), e.file
	if o.Provider == "" {
		o.Provider = "codex"
	}
	if o.Channel == "" {
		o.Channel = "chatgpt"
	}
	o.Sleep = func(context.Context, time.Duration) error { return nil }
	if err := loginRun(context.Background(), &o); err != nil {
		t.Fatalf("login %s/%s: %v", o.Channel, o.Account, err)
	}
}

// importAuth writes a Codex CLI auth.json for a fresh sign-in of acct and
// imports it as account; it returns the tokens.
func (e *acctEnv) importAuth(t *testing.T, account, acct string) (access, refresh string) {
	at, rt, id := e.signin.Issue(acct)
	f := filepath.Join(t.TempDir(), "auth.json")
	b, _ := json.Marshal(map[string]any{"OPENAI_API_KEY": nil, "tokens": map[string]any{"id_token": id, "access_token": at, "refresh_token": rt, "account_id": acct},
		"last_refresh": time.Now().UTC()})
	os.WriteFile(f, b, 0o600)
	e.login(t, LoginOptions{Account: account, Import: f})
	return at, rt
}

func (e *acctEnv) accounts(t *testing.T) map[string]account.Status {
	t.Helper()
	var out bytes.Buffer
	if err := accountsRun(context.Background(), &AccountsOptions{IO: IOStreams{Out: &out}, Config: e.file, JSON: true}); err != nil {
		t.Fatal(err)
	}
	e.outputs.Write(out.Bytes())
	var list []account.Status
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatalf("accounts --json: %v\n%s", err, out.String())
	}
	m := map[string]account.Status{}
	for _, s := range list {
		m[s.Channel+"/"+s.Account] = s
	}
	return m
}

// serve starts `ccload serve` on the config and returns its base URL.
func (e *acctEnv) serve(t *testing.T) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveRun(ctx, &ServeOptions{IO: e.io(""), Config: e.file, Grace: 2 * time.Second, Ready: func(a string) { addr <- a }})
	}()
	select {
	case a := <-addr:
		return "http://" + a, func() { cancel(); <-done }
	case err := <-done:
		cancel()
		t.Fatalf("serve exited: %v\n%s", err, e.outputs)
	}
	return "", nil
}

// ask sends one request of a client family and returns status and body.
func ask(t *testing.T, base, family string) (int, string) {
	t.Helper()
	var req *http.Request
	switch family {
	case "responses":
		req, _ = http.NewRequest("POST", base+"/v1/responses", strings.NewReader(`{"model":"gpt-5.4","instructions":"be brief","input":"hi","stream":true,"max_output_tokens":50,"metadata":{"a":"b"}}`))
		req.Header.Set("Authorization", "Bearer sk-client-token")
		req.Header.Set("session_id", "sess-1")
	case "anthropic":
		req, _ = http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"model":"gpt-5.4","max_tokens":50,"system":"be brief","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object"}}]}`))
		req.Header.Set("x-api-key", "sk-client-token")
		req.Header.Set("anthropic-version", "2023-06-01")
	case "chat":
		req, _ = http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-5.4","max_tokens":50,"temperature":0.2,"stream":true,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer sk-client-token")
	case "gemini":
		req, _ = http.NewRequest("POST", base+"/v1beta/models/gpt-5.4:generateContent", strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":50}}`))
		req.Header.Set("x-goog-api-key", "sk-client-token")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// noSecretsAnywhere checks that no token text is in the database file
// (outside the sealed column, which is ciphertext) nor in any output.
func (e *acctEnv) noSecretsAnywhere(t *testing.T, secrets ...string) {
	t.Helper()
	files, _ := filepath.Glob(e.db + "*")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, s := range secrets {
			if s != "" && bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds a credential in the clear (%s…)", filepath.Base(f), s[:8])
			}
		}
	}
	out := e.outputs.String()
	for _, s := range secrets {
		if s != "" && strings.Contains(out, s) {
			t.Errorf("output shows a credential (%s…)", s[:8])
		}
	}
}

// TestLoginWays signs accounts in each way the providers offer and checks
// what is stored and shown.
func TestLoginWays(t *testing.T) {
	e := newAcctEnv(t, time.Hour)
	var secrets []string

	// --import: the Codex CLI's auth.json.
	at, rt := e.importAuth(t, "alice", "acct-imported")
	secrets = append(secrets, at, rt)

	// --import of a flat credential object (ccLoad's oauth_credential).
	fat, frt, fid := e.signin.Issue("acct-flat")
	secrets = append(secrets, fat, frt)
	flat := filepath.Join(t.TempDir(), "cred.json")
	fb, _ := json.Marshal(map[string]string{"access_token": fat, "refresh_token": frt, "id_token": fid})
	os.WriteFile(flat, fb, 0o600)
	e.login(t, LoginOptions{Account: "bob", Import: flat})
	if s := e.accounts(t)["chatgpt/bob"]; s.State != "ok" || s.Subject != account.Fingerprint("acct-flat") {
		t.Fatalf("flat --import: %+v", s)
	}

	// --token: a personal access token.
	tok, rt2, _ := e.signin.Issue("acct-token")
	secrets = append(secrets, tok, rt2)
	e.login(t, LoginOptions{Account: "bob", Token: tok})
	if s := e.accounts(t)["chatgpt/bob"]; s.State != "ok" || s.Subject == "" || s.AccessExpires == nil {
		t.Fatalf("--token: %+v", s)
	}

	// --device: the Codex device code.
	e.signin.Account = "acct-device"
	e.login(t, LoginOptions{Account: "alice", Device: true})
	if !strings.Contains(e.outputs.String(), e.issuer+"/codex/device") {
		t.Errorf("device login did not print the verification page")
	}

	// Browser sign-in with PKCE and a local callback; the test is the browser.
	e.signin.Account = "acct-browser"
	e.login(t, LoginOptions{Account: "bob", Port: 0, OpenURL: func(u string) {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
		}
	}})

	// --paste: the redirect URL pasted on a machine without a browser.
	e.signin.Account = "acct-paste"
	pr, pw := io.Pipe()
	o := LoginOptions{Account: "alice", Paste: true, OpenURL: func(u string) {
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(u)
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		resp.Body.Close()
		io.WriteString(pw, resp.Header.Get("Location")+"\n")
	}}
	o.IO, o.Config, o.Provider, o.Channel = IOStreams{In: pr, Out: e.outputs, Err: e.outputs}, e.file, "codex", "chatgpt"
	if err := loginRun(context.Background(), &o); err != nil {
		t.Fatalf("--paste: %v", err)
	}

	// xAI: the RFC 8628 device flow.
	e.signin.Account = "acct-xai"
	e.login(t, LoginOptions{Provider: "xai", Channel: "grok", Account: "carol"})

	st := e.accounts(t)
	want := map[string]string{"chatgpt/alice": "acct-paste", "chatgpt/bob": "acct-browser", "grok/carol": "acct-xai"}
	for k, acct := range want {
		if s := st[k]; s.State != "ok" || s.Subject != account.Fingerprint(acct) || s.AccessExpires == nil {
			t.Errorf("%s: %+v (want subject of %s)", k, s, acct)
		}
	}
	e.noSecretsAnywhere(t, secrets...)

	// logout: the account is signed out.
	if err := logoutRun(context.Background(), &LogoutOptions{IO: e.io(""), Config: e.file, Channel: "grok", Account: "carol"}); err != nil {
		t.Fatal(err)
	}
	if s := e.accounts(t)["grok/carol"]; s.State != "signed_out" {
		t.Errorf("after logout: %+v", s)
	}
}

// TestAccountPoolServes: every client family is answered through the
// Codex backend, whose dialect checks pass; tokens are refreshed before
// they expire; a revoked account leaves the rotation while the pool keeps
// answering 200; an exhausted account is skipped until its reset and used
// after it; a restart keeps the rotated credentials.
func TestAccountPoolServes(t *testing.T) {
	e := newAcctEnv(t, 3*time.Second)
	at1, rt1 := e.importAuth(t, "alice", "acct-a")
	at2, rt2 := e.importAuth(t, "bob", "acct-b")
	base, stop := e.serve(t)

	for _, fam := range []string{"responses", "anthropic", "chat", "gemini"} {
		if code, body := ask(t, base, fam); code != 200 {
			t.Fatalf("%s: %d %s", fam, code, body)
		}
	}
	if e.backend.Calls("acct-a") == 0 || e.backend.Calls("acct-b") == 0 {
		t.Errorf("round robin: alice %d, bob %d calls", e.backend.Calls("acct-a"), e.backend.Calls("acct-b"))
	}

	// Refresh before expiry: keep asking past a token's life.
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		if code, body := ask(t, base, "responses"); code != 200 {
			t.Fatalf("while tokens rotate: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond) // pace the requests over the token's life
	}
	if e.signin.Refreshes("acct-a") == 0 || e.signin.Refreshes("acct-b") == 0 || e.signin.Reused() != 0 {
		t.Fatalf("refreshes alice %d bob %d, reused %d", e.signin.Refreshes("acct-a"), e.signin.Refreshes("acct-b"), e.signin.Reused())
	}

	// Exhausted: alice's quota is used up for 2 s; no client sees a 429.
	reset := time.Now().Add(2 * time.Second)
	e.backend.Exhaust("acct-a", reset)
	for range 6 {
		if code, body := ask(t, base, "responses"); code != 200 {
			t.Fatalf("with alice exhausted: %d %s", code, body)
		}
	}
	if n := e.backend.LimitErrors("acct-a"); n != 1 {
		t.Errorf("alice was sent %d requests while exhausted, want exactly the one that found out", n)
	}
	var s account.Status
	wait.Eventually(t, 10*time.Second, "alice stored as exhausted", func() bool { s = e.accounts(t)["chatgpt/alice"]; return s.State == "exhausted" }) // stored off the request path
	if s.State != "exhausted" || s.ExhaustedUntil == nil || s.ExhaustedUntil.Unix() != reset.Unix() {
		t.Fatalf("alice after the 429: %+v (want exhausted until %s)", s, reset.UTC())
	}
	before := e.backend.Calls("acct-a")
	for time.Now().Before(reset.Add(1500 * time.Millisecond)) {
		ask(t, base, "responses")
		time.Sleep(100 * time.Millisecond)
	}
	if e.backend.Calls("acct-a") == before {
		t.Fatal("alice not used again after her reset")
	}

	// Restart: the rotated credentials are in the database.
	stop()
	reusedBefore := e.signin.Reused()
	base, stop = e.serve(t)
	defer stop()
	deadline = time.Now().Add(3500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if code, body := ask(t, base, "anthropic"); code != 200 {
			t.Fatalf("after restart: %d %s", code, body)
		}
		time.Sleep(150 * time.Millisecond)
	}
	if e.signin.Reused() != reusedBefore {
		t.Fatal("a restart spent a used refresh token")
	}

	// Revoked: bob's refresh fails for good; alice keeps the pool at 200.
	e.signin.Revoke("acct-b")
	deadline = time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		if code, body := ask(t, base, "responses"); code != 200 {
			t.Fatalf("with bob revoked: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := e.accounts(t)["chatgpt/bob"]; s.State != "invalid" || !strings.Contains(s.Reason, "refresh_token_invalidated") {
		t.Fatalf("bob after revocation: %+v", s)
	}
	e.noSecretsAnywhere(t, at1, rt1, at2, rt2)
	rows := mustRows(t, e.db)
	for _, r := range rows {
		var c account.Credential
		b, _ := json.Marshal(c)
		if bytes.Contains(r.Credential, b[:5]) {
			t.Errorf("credential column of %s is not sealed", r.Account)
		}
	}
}

func mustRows(t *testing.T, db string) []store.Account {
	st, err := store.Open(context.Background(), "sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.ListAccounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestExpiredTokenRetriesSameAccount: a 401 saying the access token
// expired renews it and retries the same account once; the client sees
// 200, and bob (not signed in) is never needed.
func TestExpiredTokenRetriesSameAccount(t *testing.T) {
	e := newAcctEnv(t, time.Hour)
	e.importAuth(t, "alice", "acct-a")
	base, stop := e.serve(t)
	defer stop()
	if code, body := ask(t, base, "responses"); code != 200 {
		t.Fatalf("first: %d %s", code, body)
	}
	e.signin.ExpireAccess("acct-a")
	if code, body := ask(t, base, "responses"); code != 200 {
		t.Fatalf("after the provider expired the token: %d %s", code, body)
	}
	if n := e.signin.Refreshes("acct-a"); n != 1 {
		t.Fatalf("%d refreshes, want 1", n)
	}
	if s := e.accounts(t)["chatgpt/bob"]; s.State != "signed_out" {
		t.Errorf("bob: %+v", s)
	}
	if code, _ := ask(t, base, "anthropic"); code != 200 || e.signin.Refreshes("acct-a") != 1 {
		t.Fatalf("next request: %d, %d refreshes", code, e.signin.Refreshes("acct-a"))
	}
	// Today's requests are counted per account from the request logs.
	wait.Eventually(t, 10*time.Second, "alice's three requests counted today", func() bool { return e.accounts(t)["chatgpt/alice"].RequestsToday == 3 })
	// The admin API shows the accounts as `ccload accounts` does.
	req, _ := http.NewRequest("GET", base+"/admin/accounts", nil)
	req.Header.Set("Authorization", "Bearer pw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got struct{ Accounts []account.Status }
	if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != 200 || len(got.Accounts) != 3 ||
		got.Accounts[0].State != "ok" || got.Accounts[0].RequestsToday != 3 || got.Accounts[0].Subject != account.Fingerprint("acct-a") || got.Accounts[1].State != "signed_out" {
		t.Fatalf("/admin/accounts: %d %s", resp.StatusCode, b)
	}
	e.outputs.Write(b)
	// With alice's quota used up too, the 503 says why, account by account.
	e.backend.Exhaust("acct-a", time.Now().Add(time.Hour))
	ask(t, base, "responses") // finds out
	if code, body := ask(t, base, "responses"); code != 503 || !strings.Contains(body, "alice exhausted until") || !strings.Contains(body, "bob not signed in") {
		t.Fatalf("every account out: %d %s", code, body)
	}
}

// TestCheckSaysKeyChanged: after server.secret_key changes, `ccload check`
// says plainly that the stored credentials cannot be decrypted.
func TestCheckSaysKeyChanged(t *testing.T) {
	e := newAcctEnv(t, time.Hour)
	e.importAuth(t, "alice", "acct-a")
	var errb bytes.Buffer
	if err := checkRun(&CheckOptions{IO: IOStreams{Out: io.Discard, Err: &errb}, Config: e.file, Offline: true}); err != nil {
		t.Fatalf("check with the right key: %v\n%s", err, errb.String())
	}
	b, _ := os.ReadFile(e.file)
	os.WriteFile(e.file, bytes.Replace(b, []byte(acctSecretKey), []byte(strings.Repeat("ab", 32)), 1), 0o600)
	errb.Reset()
	err := checkRun(&CheckOptions{IO: IOStreams{Out: io.Discard, Err: &errb}, Config: e.file, Offline: true})
	if err == nil || !strings.Contains(err.Error(), "cannot decrypt") || !strings.Contains(errb.String(), "chatgpt/alice") {
		t.Fatalf("check with another key: %v\n%s", err, errb.String())
	}
	if s := e.accounts(t)["chatgpt/alice"]; s.State != "undecryptable" {
		t.Errorf("accounts: %+v", s)
	}
}

// TestCodexAccountOverWebSocket: a Responses client on a WebSocket, a
// Codex account channel with websockets: true: the turn goes up over the
// backend's WebSocket with the account's headers and the Codex dialect.
func TestCodexAccountOverWebSocket(t *testing.T) {
	e := newAcctEnv(t, time.Hour)
	b, _ := os.ReadFile(e.file)
	os.WriteFile(e.file, bytes.Replace(b, []byte("    affinity: false"), []byte("    affinity: false\n    websockets: true"), 1), 0o600)
	e.importAuth(t, "alice", "acct-a")
	base, stop := e.serve(t)
	defer stop()
	h := http.Header{}
	h.Set("Authorization", "Bearer sk-client-token")
	h.Set("OpenAI-Beta", "responses_websockets=2026-02-06")
	h.Set("session_id", "sess-ws")
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/v1/responses", h)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.WriteMessage(websocket.TextMessage, []byte(`{"type":"response.create","model":"gpt-5.4","instructions":"x","max_output_tokens":9,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"ws-hello"}]}]}`))
	for {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		typ := gjson.GetBytes(msg, "type").String()
		if typ == "error" || typ == "response.failed" {
			t.Fatalf("turn failed: %s", msg)
		}
		if typ == "response.completed" {
			break
		}
	}
	if e.backend.Sockets() != 1 {
		t.Fatalf("%d upstream sockets, want the turn over one", e.backend.Sockets())
	}
	rec := e.backend.Inner.Requests()
	body := rec[len(rec)-1].Body
	if gjson.GetBytes(body, "store").Bool() || !gjson.GetBytes(body, "store").Exists() || gjson.GetBytes(body, "max_output_tokens").Exists() {
		t.Fatalf("upstream frame not in the Codex dialect: %s", body)
	}
}
