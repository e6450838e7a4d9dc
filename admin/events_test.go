package admin_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/ccloadtest/wait"
)

// TestEventsStreamedRequest: a subscriber sees start, first_byte and end of
// a streamed request, in that order, with the same id and the request's
// details; the subscription is released when the client goes away.
func TestEventsStreamedRequest(t *testing.T) {
	e := start(t)
	if e.Engine.Events().Active() {
		t.Fatal("bus active before anyone subscribed")
	}
	c := adminapi.NewClient(e.URL, adminPass, nil)
	s, err := c.Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !e.Engine.Events().Active() {
		t.Fatal("Events returned before the server subscribed")
	}
	if st, body := e.proxy(t, "claude-y", true, ""); st != 200 || !strings.Contains(body, "message_stop") {
		t.Fatalf("stream: %d %s", st, body)
	}
	var got []adminapi.Event
	timeout := time.After(5 * time.Second)
	for len(got) == 0 || got[len(got)-1].Type != "end" {
		select {
		case ev, ok := <-s.C:
			if !ok {
				t.Fatalf("stream ended: %v", s.Err())
			}
			if ev.Type != "progress" { // progress depends on timing
				got = append(got, ev)
			}
		case <-timeout:
			t.Fatalf("no end event; got %+v", got)
		}
	}
	var types []string
	for _, ev := range got {
		types = append(types, ev.Type)
		if ev.ID != got[0].ID {
			t.Errorf("event %s has id %d, start had %d", ev.Type, ev.ID, got[0].ID)
		}
	}
	if strings.Join(types, ",") != "start,first_byte,end" {
		t.Fatalf("event order %v", types)
	}
	end := got[2]
	if end.Token != "alice" || end.Model != "claude-y" || end.Channel != "main" || !end.Stream ||
		end.Status != 200 || end.ClientProtocol != "anthropic" || end.OutputTokens == 0 || !strings.HasPrefix(end.URLHost, "127.0.0.1:") {
		t.Errorf("end event %+v", end)
	}

	s.Close()
	if err := s.Err(); err != nil {
		t.Errorf("Err after Close = %v", err)
	}
	// The server notices the gone client at the latest at the next
	// keep-alive (50 ms here) and drops the subscription.
	wait.Eventually(t, 5*time.Second, "the subscription released after the client left", func() bool {
		return !e.Engine.Events().Active()
	})
}

// TestEventsWire checks the SSE framing: the connected comment, keep-alive
// comments, "event:" and "data:" lines, and the types filter.
func TestEventsWire(t *testing.T) {
	e := start(t)
	req, _ := http.NewRequest("GET", e.URL+"/admin/events?types=end", nil)
	req.Header.Set("Authorization", "Bearer "+adminPass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("headers %v", resp.Header)
	}
	rd := bufio.NewReader(resp.Body)
	line := func() string {
		l, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return strings.TrimRight(l, "\n")
	}
	if l := line(); l != ": connected" {
		t.Fatalf("first line %q", l)
	}
	line()
	if l := line(); l != ": keep-alive" {
		t.Fatalf("want a keep-alive comment, got %q", l)
	}
	line()
	e.proxy(t, "claude-x", false, "") // its end event waits in the subscription
	for {
		l := line()
		if strings.HasPrefix(l, ":") || l == "" {
			continue
		}
		if l != "event: end" {
			t.Fatalf("filtered stream sent %q, want only end events", l)
		}
		data := line()
		if !strings.HasPrefix(data, `data: {"type":"end","id":`) || !strings.Contains(data, `"model":"claude-x"`) {
			t.Fatalf("data line %q", data)
		}
		break
	}

	scenario{method: "GET", url: "/admin/events?types=start,bogus", headers: bearer, status: 400,
		contains: []string{`"error":"types:`}}.run(t, e)
}

// TestEventsEndOnClose: Close ends open streams, so serve's graceful
// shutdown does not wait for them.
func TestEventsEndOnClose(t *testing.T) {
	e := start(t)
	s, err := adminapi.NewClient(e.URL, adminPass, nil).Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e.Admin.Close()
	select {
	case _, ok := <-s.C:
		if ok {
			t.Fatal("event after Close")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stream still open after Close")
	}
	if s.Err() == nil {
		t.Error("Err nil for a stream the server ended")
	}
}
