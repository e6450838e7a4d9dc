package engine

import (
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/affinity"
	"github.com/ccload/ccload/engine/health"
	"github.com/ccload/ccload/engine/listen"
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
	// bodyBuf is body's pooled buffer (bodybuf.go), nil when body is not
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

// wantsChatUsage reports whether an OpenAI Chat client asked for the usage
// chunk; one that did not must not get it (some index choices[0] always).
// admit reads it once from the body.
func (r *request) wantsChatUsage() bool { return r.chatUsage }
