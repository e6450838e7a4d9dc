package upstream

import (
	"context"
	"crypto/tls"
	"net"
	"time"
)

// dialAside dials addr on a goroutine of its own and waits for it. Below
// net.Dialer.Dial the stack runs several KiB deeper than anything else a
// request does; dialled from the request's goroutine, which is already
// deep in the handler there, it grows that goroutine's stack from 8 to 16
// KiB. fasthttp reuses its goroutines, and a stream's goroutine waits at a
// depth that keeps the runtime from shrinking the stack back, so every
// open stream held 16 KiB of stack where 8 do (perf: memory per
// stream). The dialling goroutine ends with the dial and its stack goes
// back to the runtime.
//
// With cfg it also runs the TLS handshake there, within the same timeout,
// and returns the TLS connection beside the TCP one, with the recordConn
// between them.
func dialAside(addr string, timeout time.Duration, cfg *tls.Config) (net.Conn, *tls.Conn, *recordConn, error) {
	type dialed struct {
		c   net.Conn
		tc  *tls.Conn
		rc  *recordConn
		err error
	}
	ch := make(chan dialed, 1)
	go func() {
		d := net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
		start := time.Now()
		c, err := d.Dial("tcp", addr)
		if err != nil || cfg == nil {
			ch <- dialed{c, nil, nil, err}
			return
		}
		tc, rc := tlsClient(c, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), timeout-time.Since(start))
		err = tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			c.Close()
			ch <- dialed{nil, nil, nil, err}
			return
		}
		ch <- dialed{c, tc, rc, nil}
	}()
	r := <-ch
	return r.c, r.tc, r.rc, r.err
}
