package admin

import (
	"bufio"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/engine/live"
)

// eventBuffer is how many events one subscriber may fall behind before it
// loses some (the bus counts them; they show as events_dropped).
const eventBuffer = 256

// active is GET /admin/active: the requests in flight, oldest first.
func (s *Server) active(ctx *fasthttp.RequestCtx) error {
	evs := s.eng.Active()
	slices.SortFunc(evs, func(a, b live.Event) int { return cmp.Compare(a.ID, b.ID) })
	out := make([]adminapi.Event, len(evs))
	for i, e := range evs {
		out[i] = eventView(e)
	}
	return writeJSON(ctx, fasthttp.StatusOK, adminapi.ActiveResponse{Time: s.clock.Now(), Active: out})
}

// events is GET /admin/events: a text/event-stream of request events,
// "event: <type>" and "data: <Event JSON>", optionally limited to
// ?types=start,end. Each client holds one bus subscription, taken when the
// stream starts and released when the client goes away (noticed at the
// latest at the next keep-alive), when Close is called, or when the server
// shuts down. Nothing is built for the bus while nobody listens.
func (s *Server) events(ctx *fasthttp.RequestCtx) error {
	var want map[string]bool
	if v := string(ctx.QueryArgs().Peek("types")); v != "" {
		want = map[string]bool{}
		for _, t := range strings.Split(v, ",") {
			switch t = strings.TrimSpace(t); t {
			case "start", "first_byte", "progress", "end":
				want[t] = true
			default:
				return errBadRequest(`types: want a comma-separated list of start, first_byte, progress, end; got ` + quote(t))
			}
		}
	}
	ctx.SetContentType("text/event-stream")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.Response.Header.Set("X-Accel-Buffering", "no") // nginx: do not buffer
	bus, keepAlive, done := s.eng.Events(), s.keepAlive, s.done
	// The writer runs after this handler returns: it captures only the
	// values above, never ctx (STYLE practice 15).
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		evs, cancel := bus.Subscribe(eventBuffer)
		defer cancel()
		// The first bytes tell the client the subscription is in place.
		w.WriteString(": connected\n\n")
		if w.Flush() != nil {
			return
		}
		tick := time.NewTicker(keepAlive)
		defer tick.Stop()
		for {
			select {
			case ev, ok := <-evs:
				if !ok {
					return
				}
				if want != nil && !want[ev.Type] {
					continue
				}
				b, err := json.Marshal(eventView(ev))
				if err != nil {
					continue
				}
				w.WriteString("event: ")
				w.WriteString(ev.Type)
				w.WriteString("\ndata: ")
				w.Write(b)
				w.WriteString("\n\n")
			case <-tick.C:
				w.WriteString(": keep-alive\n\n")
			case <-done:
				return
			}
			if w.Flush() != nil {
				return
			}
		}
	})
	return nil
}

// eventView is the wire form of a bus event. The fields are the same; the
// copy keeps adminapi free of engine (a test checks the JSON is identical).
func eventView(e live.Event) adminapi.Event {
	return adminapi.Event{
		Type: e.Type, ID: e.ID, Time: e.Time, Token: e.Token,
		ClientProtocol: e.ClientProtocol, UpstreamProtocol: e.UpstreamProtocol,
		Model: e.Model, Channel: e.Channel, URLHost: e.URLHost, Stream: e.Stream,
		ElapsedMs: e.ElapsedMs, TTFBMs: e.TTFBMs, Attempts: e.Attempts,
		InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, Cost: e.Cost,
		Status: e.Status, FailureScope: e.FailureScope, Error: e.Error,
	}
}
