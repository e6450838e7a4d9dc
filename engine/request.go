package engine

import (
	"math/bits"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/affinity"
	"github.com/ccload/ccload/engine/health"
	"github.com/ccload/ccload/engine/listen"
	"github.com/ccload/ccload/engine/live"
)

// request is one client request while it is served. It holds copies of
// everything it needs from the fasthttp context, so streaming code that
// runs after the handler returns never touches the RequestCtx.
type request struct {
	id    uint64
	ep    endpoint
	snap  *config.Snapshot
	token *config.Token
	body  []byte
	// bodyBuf is body's pooled buffer (copyBody), nil when body is not
	// pooled; dropBody gives it back unless bodyLent: net/http's
	// transport took the body. relaying: a stream's relay, which runs
	// after the handler returns, drops the body, not the handler.
	bodyBuf            *[]byte
	bodyLent, relaying bool
	// bodyChecked: admission found body to be one valid JSON object
	// (checkInput), so a conversion need not check it again.
	bodyChecked bool
	header      [][2]string // client headers that may be forwarded (native only)
	model       string
	stream      bool
	start       time.Time
	clientIP    string
	attempts    int
	// unbooked: the answer carries no usage ccload reads (speech audio, a
	// streamed image or transcription relayed unparsed), so its cost is
	// unknown: refused under a cost limit, flagged unpriced otherwise
	// (pricedRoutes).
	unbooked bool
	// retryAfter is the soonest wait the failed attempts' upstreams asked
	// for (0: none), passed on when every attempt failed.
	retryAfter time.Duration
	// acctToken is the access token of the latest attempt on an account
	// (accounts.go), so a 401 renews that one and no newer one.
	acctToken string
	// clientCred is the client's own upstream credential (header name and
	// value) when it authenticated with x-ccload-token, for a
	// `credentials: client` channel (auth.go).
	clientCred [2]string
	rec        record
	// chatUsage: an OpenAI Chat client sent stream_options.include_usage.
	chatUsage bool
	chSlot    *health.Load // the winning channel's concurrency slot, released by finish
	tokSlot   *health.Load // the token's slot, released by finish
	// costReserved: the ledger counts this request in flight for the
	// token's cost_limit until finish settles it.
	costReserved bool
	// socket: a WebSocket turn (websocket.go), not an HTTP request.
	socket bool
	ups    *upstreamSockets // the socket's idle native upstream socket
	// finished: finish ran; it runs once, whichever of its callers
	// (the handler's end, a stream's end, a recovered panic) comes first.
	finished atomic.Bool
	// session: which client session this is (engine/affinity); pin: the
	// route of its last success, when the plan honours it.
	session affinity.Identity
	// sessionKey is the session's key in the affinity table once keyed
	// is set (pinKey).
	sessionKey affinity.SessionKey
	keyed      bool
	pin        affinity.Route
	// inProcess: a request made inside ccload (a channel test) on a
	// RequestCtx with no connection.
	inProcess bool
	// debug: the token or some channel has debug on, so an attempt may be
	// captured (debugcapture.go); clientKey is then the client's token, so
	// the capture can scrub it.
	debug     bool
	clientKey string
	// probe: the protocol detection this request's attempt is running.
	probe *probeRun
	// conn is the client's connection when it is watched for a hang-up
	// (engine/listen); gone is set once the client left, and call is the
	// attempt its leaving cancels.
	conn *listen.Conn
	gone atomic.Bool
	call atomic.Pointer[attempt]
	// dropSignatures: an upstream refused a reasoning signature of this
	// request, which is now sent without any (retryWithoutSignatures).
	dropSignatures bool
}

// HungUp runs when the client hung up before its answer was complete
// (listen.Waiter): the attempt running is cancelled with errClientGone
// and none follows. It may run on any goroutine, more than once.
func (r *request) HungUp() {
	r.gone.Store(true)
	if c := r.call.Load(); c != nil {
		c.cancel(errClientGone)
		// The HTTP/1.1 client does not watch the context while it waits
		// for the answer headers (its deadline stands for the timers):
		// the connection is closed under it instead.
		c.headerWait.Interrupt()
	}
}

// calling makes c the attempt a hang-up cancels.
func (r *request) calling(c *attempt) {
	r.call.Store(c)
	if r.gone.Load() {
		c.cancel(errClientGone)
	}
}

func (e *Engine) newRequest(ctx *fasthttp.RequestCtx, ep endpoint, snap *config.Snapshot, tok *config.Token) *request {
	r := &request{
		id:       e.active.next.Add(1),
		ep:       ep,
		snap:     snap,
		token:    tok,
		start:    e.clock.Now(),
		clientIP: ClientIP(ctx, &snap.Server),
	}
	r.ups, r.socket = ctx.UserValue(wsTurnKey).(*upstreamSockets)
	if r.socket {
		r.body = append([]byte(nil), ctx.PostBody()...) // a socket turn's body is not pooled
	} else {
		r.body, r.bodyBuf = copyBody(ctx.PostBody())
	}
	// fasthttp would hold its copy of the body until the response is out,
	// which for a stream is its whole life: give it back to fasthttp's pool
	// now (perf: an agent's body is hundreds of kilobytes).
	ctx.Request.ResetBody()
	r.header = forwardHeaders(&ctx.Request.Header)
	r.clientCred = clientCredential(&ctx.Request.Header)
	r.debug = tok.Debug || snap.HasDebug()
	if r.debug {
		r.clientKey = string(clientToken(ctx))
	}
	r.rec = record{
		id:             string(ctx.Request.Header.Peek("x-request-id")),
		start:          r.start,
		token:          tok.Name,
		clientProtocol: string(ep.family),
		clientIP:       r.clientIP,
		red:            e.redactor(snap),
	}
	return r
}

// event describes r at now. Only fields written before the request went
// into the active map, or kept by the record, are read here.
func (r *request) event(typ string, now time.Time) live.Event {
	v := r.rec.view()
	ev := live.Event{
		Type: typ, ID: r.id, Time: now, Token: r.rec.token, ClientProtocol: r.rec.clientProtocol,
		Model: r.model, Stream: r.stream, ElapsedMs: now.Sub(r.start).Milliseconds(), Attempts: v.attempts,
		TTFBMs: v.ttfb.Milliseconds(), InputTokens: v.usage.Input, OutputTokens: v.usage.Output,
		Status: v.status, Error: v.errText,
	}
	if v.attempts > 0 {
		a := &v.route
		ev.Channel, ev.UpstreamProtocol, ev.URLHost = a.Channel, string(a.Protocol), host(a.URL)
		if !v.won {
			ev.FailureScope = string(a.Scope)
		}
	}
	return ev
}

func host(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Host
}

// dropBody ends the request's use of its body, giving a pooled buffer
// back unless net/http took it. It runs once the answer is out: at the end
// of the handler, or of the relay for a stream.
func (r *request) dropBody() {
	bp := r.bodyBuf
	r.body, r.bodyBuf = nil, nil
	if bp != nil && !r.bodyLent {
		giveBody(bp)
	}
}

// A request's body is copied out of fasthttp's buffer (newRequest says
// why). An agent's body is tens to hundreds of kilobytes per turn, and in
// the load benchmark's agent scenario that copy was 95.6% of the bytes the
// gateway allocated: the collector ran several times a second for it, its
// mark workers took 8.6% of the CPU and the scavenger's madvise another
// 1.9%, and each fresh copy faulted its pages in again (perf).
// Bodies of pooledBodyMin bytes and more are therefore copied into
// buffers from size-class pools and given back when the request is done
// with them (request.dropBody).
//
// What may keep a view of the body past that point is the hazard. The
// rules: admission clones what it keeps (members and the model,
// serve.go; the session, engine/affinity), converters write what they
// produce into new buffers and a stream's converter copies what it keeps
// (relay drops the body as the stream starts), and a body that net/http's transport took is
// never given back (it may read a request body after RoundTrip returned;
// upstreamRequest.lent). Under the race detector every body is pooled and
// a given-back body is overwritten with '~' and never reused
// (bodybuf_race.go), so that a view kept too long shows up in the
// engine's tests as a corrupted value.
const (
	pooledBodyClass0 = 16 << 10 // the smallest class's capacity
	pooledBodyMax    = 16 << 20 // larger bodies are allocated
)

// bodyPools are the classes from 16 KiB (2^14) to 16 MiB (2^24).
var bodyPools [24 - 14 + 1]sync.Pool

// bodyClass is the pool of a buffer for n bytes: class c holds
// pooledBodyClass0<<c bytes.
func bodyClass(n int) int {
	return max(0, bits.Len(uint(n-1))-bits.Len(pooledBodyClass0-1))
}

// copyBody copies src into a pooled buffer when src is pooledBodyMin
// bytes or more, and returns the copy with its buffer (nil when not
// pooled).
func copyBody(src []byte) ([]byte, *[]byte) {
	if len(src) < pooledBodyMin || len(src) > pooledBodyMax {
		return append([]byte(nil), src...), nil
	}
	c := bodyClass(len(src))
	bp, _ := bodyPools[c].Get().(*[]byte)
	if bp == nil {
		b := make([]byte, pooledBodyClass0<<c)
		bp = &b
	}
	b := (*bp)[:len(src)]
	copy(b, src)
	return b, bp
}

// giveBody returns a buffer from copyBody; nothing may read it after.
func giveBody(bp *[]byte) {
	if poisonBodies {
		b := (*bp)[:cap(*bp)]
		for i := range b {
			b[i] = '~'
		}
		return
	}
	bodyPools[bodyClass(cap(*bp))].Put(bp)
}

// wantsChatUsage reports whether an OpenAI Chat client asked for the usage
// chunk; one that did not must not get it (some index choices[0] always).
// admit reads it once from the body.
func (r *request) wantsChatUsage() bool { return r.chatUsage }
