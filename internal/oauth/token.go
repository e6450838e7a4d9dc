package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Tokens is a token endpoint's success answer (RFC 6749 §5.1; id_token
// from OpenID Connect).
type Tokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	IDToken      string `json:"id_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
}

// Expiry is when the access token expires: from expires_in, else the
// token's own exp claim, else zero (unknown).
func (t Tokens) Expiry(now time.Time) time.Time {
	if t.ExpiresIn > 0 {
		return now.Add(time.Duration(t.ExpiresIn) * time.Second)
	}
	return JWTExpiry(t.AccessToken)
}

// Error is a token endpoint's error answer (RFC 6749 §5.2), also in the
// shapes providers use beside it ({"error": {"code": ...}}).
type Error struct {
	Status      int
	Code        string // invalid_grant, refresh_token_reused, authorization_pending, ...
	Description string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("token endpoint answered %d", e.Status)
	if e.Code != "" {
		msg += ": " + e.Code
	}
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}

// Terminal reports whether the grant can never succeed again: the refresh
// token was used, revoked or expired, or the account is disabled. The
// codes beside RFC 6749's invalid_grant are the ones OpenAI's token
// endpoint sends (the Codex CLI's codex-rs/login/src/auth/manager.rs
// treats refresh_token_expired, refresh_token_reused and
// refresh_token_invalidated as "sign in again").
func (e *Error) Terminal() bool {
	switch e.Code {
	case "invalid_grant", "refresh_token_expired", "refresh_token_reused", "refresh_token_invalidated",
		"refresh_token_revoked", "token_revoked", "account_deactivated", "account_disabled", "unauthorized_client":
		return true
	}
	return false
}

// maxTokenAnswer bounds what is read of a token endpoint's answer.
const maxTokenAnswer = 1 << 20

// PostForm sends an application/x-www-form-urlencoded grant (RFC 6749).
func PostForm(ctx context.Context, hc *http.Client, endpoint string, form url.Values) (Tokens, error) {
	return post(ctx, hc, endpoint, "application/x-www-form-urlencoded", []byte(form.Encode()))
}

// PostJSON sends a grant as a JSON object, as some providers' CLIs do.
func PostJSON(ctx context.Context, hc *http.Client, endpoint string, body map[string]string) (Tokens, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return Tokens{}, err
	}
	return post(ctx, hc, endpoint, "application/json", b)
}

func post(ctx context.Context, hc *http.Client, endpoint, contentType string, body []byte) (Tokens, error) {
	b, status, err := Do(ctx, hc, endpoint, contentType, body)
	if err != nil {
		return Tokens{}, err
	}
	if status/100 != 2 {
		return Tokens{}, ParseError(status, b)
	}
	var t Tokens
	if err := json.Unmarshal(b, &t); err != nil {
		return Tokens{}, fmt.Errorf("token endpoint answer: %w", err)
	}
	if t.AccessToken == "" {
		return Tokens{}, fmt.Errorf("token endpoint answered without an access token")
	}
	return t, nil
}

// Do posts body and returns the answer's bytes and status. Errors never
// carry the body sent (it holds secrets).
func Do(ctx context.Context, hc *http.Client, endpoint, contentType string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("oauth request: bad endpoint")
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if e, ok := err.(*url.Error); ok {
			ue = e
			return nil, 0, fmt.Errorf("oauth request to %s: %w", redactURL(endpoint), ue.Err)
		}
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenAnswer))
	return b, resp.StatusCode, err
}

// ParseError reads an error answer. It keeps only the error code and
// description, never the rest of the body.
func ParseError(status int, b []byte) *Error {
	var v struct {
		Error       json.RawMessage `json:"error"`
		Code        string          `json:"code"`
		Description string          `json:"error_description"`
		Message     string          `json:"message"`
	}
	e := &Error{Status: status}
	if json.Unmarshal(b, &v) != nil {
		return e
	}
	var s string
	var obj struct{ Code, Error, Message, Type string }
	switch {
	case json.Unmarshal(v.Error, &s) == nil:
		e.Code = s
	case json.Unmarshal(v.Error, &obj) == nil:
		e.Code = firstOf(obj.Code, obj.Error, obj.Type)
		e.Description = obj.Message
	}
	if e.Code == "" {
		e.Code = v.Code
	}
	e.Description = truncate(firstOf(v.Description, e.Description, v.Message), 300)
	return e
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// redactURL drops the query of a URL for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the token endpoint"
	}
	u.RawQuery, u.User = "", nil
	return strings.TrimSuffix(u.String(), "?")
}
