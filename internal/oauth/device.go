package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Metadata is the part of an authorization server's metadata (RFC 8414,
// OpenID Connect Discovery) that ccload uses.
type Metadata struct {
	AuthorizationEndpoint       string `json:"authorization_endpoint"`
	TokenEndpoint               string `json:"token_endpoint"`
	DeviceAuthorizationEndpoint string `json:"device_authorization_endpoint"` // RFC 8628 §4
}

// Discover reads issuer's /.well-known/openid-configuration, then
// /.well-known/oauth-authorization-server.
func Discover(ctx context.Context, hc *http.Client, issuer string) (Metadata, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	var last error
	for _, p := range []string{"/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(issuer, "/")+p, nil)
		if err != nil {
			return Metadata{}, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			last = err
			continue
		}
		var m Metadata
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode == 200 && err == nil && m.TokenEndpoint != "" {
			return m, nil
		}
		last = fmt.Errorf("%s answered %d", p, resp.StatusCode)
	}
	return Metadata{}, fmt.Errorf("discover %s: %w", issuer, last)
}

// Device is a device authorization answer (RFC 8628 §3.2).
type Device struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int64  `json:"expires_in"`
	Interval                int64  `json:"interval"`
}

// StartDevice requests a device and user code (RFC 8628 §3.1).
func StartDevice(ctx context.Context, hc *http.Client, endpoint, clientID, scope string) (Device, error) {
	form := url.Values{"client_id": {clientID}}
	if scope != "" {
		form.Set("scope", scope)
	}
	b, status, err := Do(ctx, hc, endpoint, "application/x-www-form-urlencoded", []byte(form.Encode()))
	if err != nil {
		return Device{}, err
	}
	if status/100 != 2 {
		return Device{}, ParseError(status, b)
	}
	var d Device
	if err := json.Unmarshal(b, &d); err != nil || d.DeviceCode == "" || d.UserCode == "" {
		return Device{}, fmt.Errorf("device authorization answer without a device or user code")
	}
	if d.Interval <= 0 {
		d.Interval = 5 // RFC 8628 §3.2: default 5 seconds
	}
	return d, nil
}

// PollDevice polls the token endpoint until the user approved, denied or
// the code expired (RFC 8628 §3.4-3.5): authorization_pending keeps
// polling, slow_down adds 5 seconds to the interval. sleep waits (tests
// shorten it).
func PollDevice(ctx context.Context, hc *http.Client, tokenURL, clientID string, d Device, sleep func(context.Context, time.Duration) error) (Tokens, error) {
	interval := time.Duration(d.Interval) * time.Second
	deadline := time.Now().Add(time.Duration(max(d.ExpiresIn, 60)) * time.Second)
	for {
		if err := sleep(ctx, interval); err != nil {
			return Tokens{}, err
		}
		t, err := PostForm(ctx, hc, tokenURL, url.Values{
			"grant_type":  {"urn:ietf:params:oauth:grant-type:device_code"},
			"device_code": {d.DeviceCode},
			"client_id":   {clientID},
		})
		var oe *Error
		switch {
		case err == nil:
			return t, nil
		case errors.As(err, &oe) && oe.Code == "authorization_pending":
		case errors.As(err, &oe) && oe.Code == "slow_down":
			interval += 5 * time.Second
		default:
			return Tokens{}, err
		}
		if time.Now().After(deadline) {
			return Tokens{}, fmt.Errorf("the device code expired before the sign-in was approved")
		}
	}
}

// Sleep waits d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
