// Package live holds what the live views of the gateway (`ccload top`,
// the dashboard, /admin/events) read of the requests in flight: the Event
// that describes one step of a request, and the Bus that fans events out
// to subscribers. It knows no request; the engine builds each event.
package live

import (
	"sync"
	"sync/atomic"
	"time"
)

// Event is one step of a client request, as /admin/events streams it to
// `ccload top` and the dashboard. Type is "start", "first_byte",
// "progress" or "end"; the other fields are filled as far as known.
type Event struct {
	Type             string    `json:"type"`
	ID               uint64    `json:"id"`
	Time             time.Time `json:"time"`
	Token            string    `json:"token"`
	ClientProtocol   string    `json:"client_protocol"`
	UpstreamProtocol string    `json:"upstream_protocol,omitempty"`
	Model            string    `json:"model"`
	Channel          string    `json:"channel,omitempty"`
	URLHost          string    `json:"url_host,omitempty"`
	Stream           bool      `json:"stream"`
	ElapsedMs        int64     `json:"elapsed_ms"`
	TTFBMs           int64     `json:"ttfb_ms,omitempty"`
	Attempts         int       `json:"attempts,omitempty"`
	InputTokens      int64     `json:"input_tokens,omitempty"`
	OutputTokens     int64     `json:"output_tokens,omitempty"`
	Cost             float64   `json:"cost,omitempty"` // USD, on "end" events
	Status           int       `json:"status,omitempty"`
	FailureScope     string    `json:"failure_scope,omitempty"`
	Error            string    `json:"error,omitempty"`
}

// Bus fans request events out to subscribers. Publishing costs one atomic
// load when nobody listens; a subscriber that cannot keep up loses events
// (counted) rather than slowing requests down.
type Bus struct {
	mu      sync.Mutex
	subs    map[chan Event]struct{}
	n       atomic.Int32
	dropped atomic.Int64
}

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{subs: map[chan Event]struct{}{}} }

// Subscribe returns a channel of events and a function that ends the
// subscription and closes the channel.
func (b *Bus) Subscribe(buffer int) (<-chan Event, func()) {
	ch := make(chan Event, buffer)
	b.mu.Lock()
	b.subs[ch] = struct{}{}
	b.n.Store(int32(len(b.subs)))
	b.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, ch)
			b.n.Store(int32(len(b.subs)))
			b.mu.Unlock()
			close(ch)
		})
	}
}

// Active reports whether anyone listens (callers skip building events).
func (b *Bus) Active() bool { return b.n.Load() > 0 }

// Dropped is the number of events lost to slow subscribers.
func (b *Bus) Dropped() int64 { return b.dropped.Load() }

// Publish hands ev to every subscriber whose buffer has room and counts
// it as dropped for the others; it never blocks.
func (b *Bus) Publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- ev:
		default:
			b.dropped.Add(1)
		}
	}
}
