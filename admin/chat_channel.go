package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/engine"
)

// maxChatTime bounds one channel chat; the answer is short.
const maxChatTime = 2 * time.Minute

// chatTester is implemented by *engine.Engine.
type chatTester interface {
	RunChatTest(ctx context.Context, t engine.ChatTest, out func(text string) error) engine.ChatResult
}

// chatChannel sends the operator's prompt to the channel through the
// normal request path (engine.RunChatTest: routing restricted to the
// channel, logged under the token "(channel test)") and streams the answer
// back as server-sent events: "delta" events with the text as it arrives,
// then one "done" event with the outcome. A viewer that leaves stops the
// upstream request.
func (s *Server) chatChannel(ctx *fasthttp.RequestCtx, name string) error {
	var req adminapi.ChatRequest
	if err := readJSON(ctx, &req); err != nil {
		return err
	}
	ct, ok := s.eng.(chatTester)
	if !ok {
		return &httpError{Status: fasthttp.StatusNotImplemented, Msg: "this engine cannot run channel chats"}
	}
	ch := s.cfg.Current().Channel(name)
	if ch == nil {
		return errNotFound("no channel named " + quote(name))
	}
	model, ok := testModel(ch, req.Model)
	if !ok {
		return errBadRequest("channel " + quote(name) + " has no model " + quote(req.Model))
	}
	if len(req.Prompt) > 4096 {
		return errBadRequest("prompt: at most 4096 bytes")
	}
	t := engine.ChatTest{Channel: name, Model: model.Name, Prompt: req.Prompt}
	log := s.log
	ctx.SetContentType("text/event-stream")
	ctx.Response.Header.Set("X-Accel-Buffering", "no")
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		cctx, cancel := context.WithTimeout(context.Background(), maxChatTime)
		defer cancel()
		res := ct.RunChatTest(cctx, t, func(text string) error {
			writeChatEvent(w, "delta", adminapi.ChatDelta{Text: text})
			return w.Flush() // an error: the viewer left
		})
		writeChatEvent(w, "done", adminapi.ChatDone{OK: res.OK, Status: res.Status, Channel: res.Channel,
			Model: res.Model, Upstream: res.Upstream, Protocol: res.Protocol, Key: res.Key, Attempts: res.Attempts,
			TTFBMs: res.TTFBMs, DurationMs: res.DurationMs, RequestID: res.RequestID, Error: res.Error})
		w.Flush()
		log.Info("admin: channel chat", "channel", t.Channel, "model", t.Model, "ok", res.OK, "status", res.Status, "ms", res.DurationMs)
	})
	return nil
}

func writeChatEvent(w *bufio.Writer, name string, v any) {
	b, _ := json.Marshal(v)
	w.WriteString("event: " + name + "\ndata: ")
	w.Write(b)
	w.WriteString("\n\n")
}
