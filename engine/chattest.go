package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/protocol"
)

// ChatTest is a real chat request for one channel: the
// dashboard's channel test and `ccload check --chat` send it to see a model
// answer, not just a status.
type ChatTest struct {
	Channel string
	Model   string // the client-visible name
	Prompt  string
	// MaxTokens bounds the answer; 0 means DefaultChatMaxTokens.
	MaxTokens int
}

// DefaultChatPrompt is the prompt of a channel test when none is given.
const DefaultChatPrompt = "Say hello in five words."

// DefaultChatMaxTokens bounds a channel test's answer.
const DefaultChatMaxTokens = 256

// ChatTestToken is the token name channel tests are logged under.
const ChatTestToken = "(channel test)"

// ChatResult is how a ChatTest ended.
type ChatResult struct {
	OK         bool   `json:"ok"`
	Status     int    `json:"status"` // what a client would have got
	Channel    string `json:"channel"`
	Model      string `json:"model"`
	Upstream   string `json:"upstream_model"`
	Protocol   string `json:"protocol"`
	Key        string `json:"key"` // key id
	Attempts   int    `json:"attempts"`
	TTFBMs     int64  `json:"ttfb_ms"`
	DurationMs int64  `json:"duration_ms"`
	RequestID  string `json:"request_id"` // the log row's request_id
	Error      string `json:"error,omitempty"`
}

// RunChatTest sends t.Prompt as an OpenAI Chat streaming request through
// the normal request path (admission, routing, attempt loop, conversion to
// the channel's protocol, cooldowns and the log row), with routing
// restricted to t.Channel by a token that may use only that channel. The
// answer's text is handed to out as it streams; an error from out (the
// viewer left) or the end of ctx stops the request and its upstream.
func (e *Engine) RunChatTest(ctx context.Context, t ChatTest, out func(text string) error) ChatResult {
	snap := e.cfg.Current()
	tok := &config.Token{Name: ChatTestToken, Channels: config.ChannelRule{Allow: []string{t.Channel}}}
	if t.Prompt == "" {
		t.Prompt = DefaultChatPrompt
	}
	if t.MaxTokens <= 0 {
		t.MaxTokens = DefaultChatMaxTokens
	}
	body := []byte(`{"stream":true,"messages":[{"role":"user","content":""}]}`)
	body, _ = sjson.SetBytes(body, "model", t.Model)
	body, _ = sjson.SetBytes(body, "max_tokens", t.MaxTokens)
	body, _ = sjson.SetBytes(body, "messages.0.content", t.Prompt)

	start := e.clock.Now()
	var req fasthttp.Request
	req.Header.SetMethod(fasthttp.MethodPost)
	req.SetRequestURI("/v1/chat/completions")
	req.Header.SetContentType("application/json")
	req.Header.Set("User-Agent", "ccload-channel-test")
	req.SetBody(body)
	var rc fasthttp.RequestCtx
	rc.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)

	ep := endpoint{family: protocol.OpenAI}
	r := e.newRequest(&rc, ep, snap, tok)
	r.inProcess = true
	reqID := "channel-test-" + strconv.FormatUint(r.id, 10)
	r.rec.setID(reqID)
	func() {
		defer e.recoverRequest(&rc, ep, &r)
		e.serveRequest(&rc, r)
	}()

	sink := &chatSink{out: out, ctx: ctx}
	if bs, ok := rc.Response.BodyStream().(*relayBody); ok {
		bs.WriteTo(sink) // relays the stream, then finish records the row
		bs.Close()
	} else if text := gjson.GetBytes(rc.Response.Body(), "choices.0.message.content").Str; text != "" {
		sink.emit(text) // the upstream answered a stream request with JSON
	}
	res := r.chatResult(t, reqID)
	res.DurationMs = e.clock.Now().Sub(start).Milliseconds()
	return res
}

// chatResult reads the finished request's record.
func (r *request) chatResult(t ChatTest, reqID string) ChatResult {
	v := r.rec.view()
	res := ChatResult{Status: v.status, Channel: t.Channel, Model: t.Model, Attempts: v.attempts,
		TTFBMs: v.ttfb.Milliseconds(), RequestID: reqID, Error: v.errText}
	if v.won {
		res.Upstream, res.Protocol, res.Key = v.route.UpstreamModel, string(v.route.Protocol), v.route.KeyFP
	}
	if res.Status == 0 && v.won {
		res.Status = 200
	}
	res.OK = res.Status >= 200 && res.Status < 300 && res.Error == ""
	return res
}

// chatSink is the client side of a channel test's stream: it reads the
// OpenAI Chat events the relay writes and hands their text on.
type chatSink struct {
	ctx context.Context
	out func(string) error
	buf []byte
}

var errChatStopped = errors.New("channel test stopped")

func (s *chatSink) Write(p []byte) (int, error) {
	if s.ctx.Err() != nil {
		return 0, errChatStopped
	}
	s.buf = append(s.buf, p...)
	for {
		i := bytes.Index(s.buf, []byte("\n\n"))
		if i < 0 {
			return len(p), nil
		}
		ev := s.buf[:i]
		s.buf = s.buf[i+2:]
		for line := range bytes.SplitSeq(ev, []byte("\n")) {
			data, ok := bytes.CutPrefix(line, []byte("data:"))
			if !ok {
				continue
			}
			text := gjson.GetBytes(bytes.TrimSpace(data), "choices.0.delta.content").Str
			if err := s.emit(text); err != nil {
				return 0, err
			}
		}
	}
}

func (s *chatSink) emit(text string) error {
	if text == "" {
		return nil
	}
	if err := s.out(text); err != nil {
		return errChatStopped
	}
	return nil
}

var _ io.Writer = (*chatSink)(nil)
