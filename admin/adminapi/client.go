package adminapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Client talks to a running ccload's admin API with the admin password as
// a Bearer token. `ccload channels|tokens|logs|top` use it. Methods are
// safe for concurrent use.
type Client struct {
	base     string // "http://127.0.0.1:8080", no trailing slash
	password string
	hc       *http.Client
}

// NewClient returns a client for the server at base (scheme and host, e.g.
// "http://127.0.0.1:8080"). hc nil means a plain http.Client. Ordinary calls
// time out after 30 s; event streams last until closed.
func NewClient(base, password string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{base: strings.TrimRight(base, "/"), password: password, hc: hc}
}

// BaseURL is the server address the client talks to.
func (c *Client) BaseURL() string { return c.base }

// callTimeout bounds every call but Events.
const callTimeout = 30 * time.Second

// NotRunningError says that nothing answers at the server address.
type NotRunningError struct {
	URL string
	Err error
}

func (e *NotRunningError) Error() string {
	return fmt.Sprintf("ccload is not running at %s (%v); start it with `ccload serve -c FILE`, or point at it with --server or CCLOAD_SERVER", e.URL, e.Err)
}

func (e *NotRunningError) Unwrap() error { return e.Err }

// APIError is an error answer of the admin API.
type APIError struct {
	Status int
	Msg    string
}

func (e *APIError) Error() string {
	if e.Status == http.StatusUnauthorized {
		return fmt.Sprintf("admin API: %s (set CCLOAD_PASS, or use -c FILE with server.admin_password)", e.Msg)
	}
	return fmt.Sprintf("admin API: %d %s", e.Status, e.Msg)
}

// Status is GET /admin/status.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	var out Status
	return &out, c.do(ctx, "GET", "/admin/status", nil, &out)
}

// Channels is GET /admin/channels.
func (c *Client) Channels(ctx context.Context) (*ChannelsResponse, error) {
	var out ChannelsResponse
	return &out, c.do(ctx, "GET", "/admin/channels", nil, &out)
}

// Cooldowns is GET /admin/cooldowns.
func (c *Client) Cooldowns(ctx context.Context) (*CooldownsResponse, error) {
	var out CooldownsResponse
	return &out, c.do(ctx, "GET", "/admin/cooldowns", nil, &out)
}

// Tokens is GET /admin/tokens.
func (c *Client) Tokens(ctx context.Context) (*TokensResponse, error) {
	var out TokensResponse
	return &out, c.do(ctx, "GET", "/admin/tokens", nil, &out)
}

// LogFilter selects request logs (GET /admin/logs). Zero fields do not
// filter. Since and Until take what the endpoint takes: "1h", an RFC 3339
// time or a date.
type LogFilter struct {
	Since, Until                 string
	Channel, Token, Model, Scope string
	Status                       string // "2xx" … "5xx"
	Before                       int64
	Limit                        int
}

func (f LogFilter) values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("since", f.Since)
	set("until", f.Until)
	set("channel", f.Channel)
	set("token", f.Token)
	set("model", f.Model)
	set("scope", f.Scope)
	set("status", f.Status)
	if f.Before > 0 {
		v.Set("before", strconv.FormatInt(f.Before, 10))
	}
	if f.Limit > 0 {
		v.Set("limit", strconv.Itoa(f.Limit))
	}
	return v
}

// Logs is GET /admin/logs.
func (c *Client) Logs(ctx context.Context, f LogFilter) (*LogsResponse, error) {
	var out LogsResponse
	path := "/admin/logs"
	if q := f.values().Encode(); q != "" {
		path += "?" + q
	}
	return &out, c.do(ctx, "GET", path, nil, &out)
}

// Log is GET /admin/logs/{id}: one row in full, with its debug capture.
func (c *Client) Log(ctx context.Context, id int64) (*LogDetail, error) {
	var out LogDetail
	return &out, c.do(ctx, "GET", "/admin/logs/"+strconv.FormatInt(id, 10), nil, &out)
}

// Stats is GET /admin/stats; empty arguments take the server's defaults.
func (c *Client) Stats(ctx context.Context, rng, bucket string) (*StatsResponse, error) {
	v := url.Values{}
	if rng != "" {
		v.Set("range", rng)
	}
	if bucket != "" {
		v.Set("bucket", bucket)
	}
	path := "/admin/stats"
	if q := v.Encode(); q != "" {
		path += "?" + q
	}
	var out StatsResponse
	return &out, c.do(ctx, "GET", path, nil, &out)
}

// Active is GET /admin/active.
func (c *Client) Active(ctx context.Context) (*ActiveResponse, error) {
	var out ActiveResponse
	return &out, c.do(ctx, "GET", "/admin/active", nil, &out)
}

// do sends one call and decodes the JSON answer into out.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("admin API %s: %w", path, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("admin API %s: bad answer: %w", path, err)
	}
	return nil
}

// send makes the request and turns transport failures and error answers
// into NotRunningError and APIError. On success the caller closes the body.
func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = strings.NewReader(string(b))
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("admin API: %w", err)
	}
	if c.password != "" {
		req.Header.Set("Authorization", "Bearer "+c.password)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if isNotRunning(err) {
			return nil, &NotRunningError{URL: c.base, Err: unwrapURLError(err)}
		}
		return nil, fmt.Errorf("admin API %s: %w", path, unwrapURLError(err))
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var eb ErrorBody
		if json.Unmarshal(b, &eb) != nil || eb.Error == "" {
			eb.Error = strings.TrimSpace(string(b))
			if eb.Error == "" {
				eb.Error = resp.Status
			}
			if resp.StatusCode == http.StatusNotFound {
				eb.Error = "not found: is " + c.base + " a ccload server?"
			}
		}
		return nil, &APIError{Status: resp.StatusCode, Msg: eb.Error}
	}
	return resp, nil
}

func isNotRunning(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// EventStream is a subscription to /admin/events. Read events from C; when
// C is closed, Err tells why (nil after Close or when ctx ended).
type EventStream struct {
	C      <-chan Event
	cancel context.CancelFunc
	err    error
	done   chan struct{}
}

// Close ends the stream.
func (s *EventStream) Close() {
	s.cancel()
	<-s.done
}

// Err is why the stream ended; call it after C is closed.
func (s *EventStream) Err() error {
	<-s.done
	return s.err
}

// Events opens /admin/events, limited to the given event types (none:
// all). It returns once the server has confirmed the subscription, so no
// event that happens after Events returns is missed.
func (c *Client) Events(ctx context.Context, types ...string) (*EventStream, error) {
	path := "/admin/events"
	if len(types) > 0 {
		path += "?types=" + url.QueryEscape(strings.Join(types, ","))
	}
	ctx, cancel := context.WithCancel(ctx)
	resp, err := c.send(ctx, "GET", path, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	rd := bufio.NewReader(resp.Body)
	// The server's first bytes are ": connected" once it has subscribed.
	if _, err := rd.ReadString('\n'); err != nil {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("admin API %s: %w", path, err)
	}
	ch := make(chan Event, 64)
	s := &EventStream{C: ch, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(ch)
		defer resp.Body.Close()
		err := readEvents(rd, func(ev Event) bool {
			select {
			case ch <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		})
		if ctx.Err() == nil {
			if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = errors.New("the server closed the event stream")
			}
			s.err = err
		}
	}()
	return s, nil
}

// readEvents parses SSE from rd, calling fn for each event with data,
// until fn returns false or rd fails.
func readEvents(rd *bufio.Reader, fn func(Event) bool) error {
	var data strings.Builder
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data.Len() > 0 {
				var ev Event
				if json.Unmarshal([]byte(data.String()), &ev) == nil && !fn(ev) {
					return nil
				}
				data.Reset()
			}
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}
