package cmd

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestLoginImportsXAICredential: the credential object ccLoad keeps for an
// xai_oauth channel (`ccload import` names this login) signs an xAI
// account in, with the expiry the object states when the access token is
// no JWT to read it from.
func TestLoginImportsXAICredential(t *testing.T) {
	e := newAcctEnv(t, time.Hour)
	_, rt, _ := e.signin.Issue("xai-carol")
	at := "xai-opaque-access-0123456789" // not a JWT: no expiry inside
	expires := time.Now().Add(time.Hour).Truncate(time.Second).UTC()
	f := filepath.Join(t.TempDir(), "cred.json")
	os.WriteFile(f, []byte(`{"access_token":"`+at+`","refresh_token":"`+rt+`","expires_at":`+strconv.FormatInt(expires.Unix(), 10)+`}`), 0o600)
	e.login(t, LoginOptions{Provider: "xai", Channel: "grok", Account: "carol", Import: f})
	s := e.accounts(t)["grok/carol"]
	if s.State != "ok" || s.AccessExpires == nil || !s.AccessExpires.Equal(expires) {
		t.Fatalf("carol after the import: %+v (want ok, expiring %s)", s, expires)
	}
	e.noSecretsAnywhere(t, at, rt)
}
