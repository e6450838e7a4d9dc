package engine

import (
	"math/bits"
	"sync"
)

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
// rules: admission clones what it keeps (members, input.go; the model,
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
