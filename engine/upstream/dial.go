package upstream

import (
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
func dialAside(addr string, timeout time.Duration) (net.Conn, error) {
	type dialed struct {
		c   net.Conn
		err error
	}
	ch := make(chan dialed, 1)
	go func() {
		d := net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
		c, err := d.Dial("tcp", addr)
		ch <- dialed{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
