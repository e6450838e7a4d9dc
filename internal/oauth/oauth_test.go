package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestPKCE(t *testing.T) {
	v, c := PKCE()
	sum := sha256.Sum256([]byte(v))
	if len(v) < 43 || len(v) > 128 || c != base64.RawURLEncoding.EncodeToString(sum[:]) || Challenge(v) != c {
		t.Fatalf("verifier %d chars, challenge mismatch", len(v))
	}
	if v2, _ := PKCE(); v2 == v {
		t.Fatal("two verifiers are equal")
	}
}

func TestParseError(t *testing.T) {
	for _, tc := range []struct {
		body, code string
		terminal   bool
	}{
		{`{"error":"invalid_grant","error_description":"used"}`, "invalid_grant", true},
		{`{"error":{"code":"refresh_token_reused","message":"already used"}}`, "refresh_token_reused", true},
		{`{"error":{"code":"refresh_token_invalidated"}}`, "refresh_token_invalidated", true},
		{`{"error":"authorization_pending"}`, "authorization_pending", false},
		{`{"error":"temporarily_unavailable"}`, "temporarily_unavailable", false},
		{`<html>bad gateway</html>`, "", false},
	} {
		e := ParseError(400, []byte(tc.body))
		if e.Code != tc.code || e.Terminal() != tc.terminal {
			t.Errorf("%s: code %q terminal %v", tc.body, e.Code, e.Terminal())
		}
	}
}

// TestPollDevice: authorization_pending keeps polling, slow_down adds five
// seconds to the interval (RFC 8628 §3.5), then the tokens arrive.
func TestPollDevice(t *testing.T) {
	var polls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:device_code" || r.Form.Get("device_code") != "dc" {
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"invalid_request"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch polls.Add(1) {
		case 1:
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"authorization_pending"}`))
		case 2:
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"slow_down"}`))
		default:
			w.Write([]byte(`{"access_token":"at","refresh_token":"rt","expires_in":60}`))
		}
	}))
	defer srv.Close()
	var waits []time.Duration
	sleep := func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	tok, err := PollDevice(context.Background(), nil, srv.URL, "cid", Device{DeviceCode: "dc", Interval: 1, ExpiresIn: 600}, sleep)
	if err != nil || tok.AccessToken != "at" || tok.RefreshToken != "rt" {
		t.Fatalf("tokens %+v, %v", tok, err)
	}
	if len(waits) != 3 || waits[0] != time.Second || waits[2] != 6*time.Second {
		t.Fatalf("waits %v, want 1s 1s 6s", waits)
	}
	// access_denied ends the poll.
	deny := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(400)
		w.Write([]byte(`{"error":"access_denied"}`))
	}))
	defer deny.Close()
	_, err = PollDevice(context.Background(), nil, deny.URL, "cid", Device{DeviceCode: "dc", Interval: 1}, sleep)
	var oe *Error
	if !errors.As(err, &oe) || oe.Code != "access_denied" {
		t.Fatalf("denied: %v", err)
	}
}

func TestJWTClaims(t *testing.T) {
	jwt := "eyJhbGciOiJub25lIn0." + base64.RawURLEncoding.EncodeToString([]byte(`{"exp":2000000000,"iat":1999996400}`)) + ".sig"
	if JWTExpiry(jwt).Unix() != 2000000000 || JWTIssuedAt(jwt).Unix() != 1999996400 {
		t.Fatal("claims not read")
	}
	if !JWTExpiry("not-a-jwt").IsZero() || Claims("a.b") != nil {
		t.Fatal("a non-JWT has claims")
	}
}
