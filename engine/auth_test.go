package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func shaHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// The cache that spares a second hash per request (headerReceived, then
// the handler) keeps only credentials that matched, and a new snapshot
// starts it afresh, so a token removed by a reload stops working at once.
func TestAuthenticateCache(t *testing.T) {
	cfg := func(tokens string) string {
		return "version: 1\nchannels:\n  - {name: a, urls: [\"http://127.0.0.1:1\"], keys: [key-a1-000000], models: [m]}\ntokens:\n" + tokens
	}
	before := snapOf(t, cfg(`  - {name: t1, token_sha256: "`+shaHex("sk-one")+`"}
  - {name: t2, token_sha256: "`+shaHex("sk-two")+`"}
`))
	after := snapOf(t, cfg(`  - {name: t1, token_sha256: "`+shaHex("sk-one")+`"}
`))
	e := &Engine{}
	for range 2 { // the second round answers from the cache
		if tok := e.authenticate(before, []byte("sk-one")); tok == nil || tok.Name != "t1" {
			t.Fatalf("sk-one = %v, want t1", tok)
		}
		if tok := e.authenticate(before, []byte("sk-two")); tok == nil || tok.Name != "t2" {
			t.Fatalf("sk-two = %v, want t2", tok)
		}
		if tok := e.authenticate(before, []byte("sk-wrong")); tok != nil {
			t.Fatalf("sk-wrong = %v, want none", tok)
		}
		if tok := e.authenticate(before, nil); tok != nil {
			t.Fatalf("no credential = %v, want none", tok)
		}
	}
	if n := len(*e.views.Load().tokens.known.Load()); n != 2 {
		t.Errorf("cache holds %d credentials, want the 2 that matched", n)
	}
	if tok := e.authenticate(after, []byte("sk-two")); tok != nil {
		t.Errorf("sk-two after its removal = %v, want none", tok)
	}
	if tok := e.authenticate(after, []byte("sk-one")); tok == nil || tok.Name != "t1" {
		t.Errorf("sk-one after the reload = %v, want t1", tok)
	}
}
