package live

import "testing"

// TestBusDropsRatherThanBlocks: a subscriber gets what fits in its buffer,
// the rest is counted as dropped, and ending the subscription closes its
// channel and leaves the bus idle.
func TestBusDropsRatherThanBlocks(t *testing.T) {
	b := NewBus()
	if b.Active() {
		t.Fatal("a new bus is active")
	}
	ch, cancel := b.Subscribe(2)
	if !b.Active() {
		t.Fatal("a bus with a subscriber is not active")
	}
	for id := range uint64(3) {
		b.Publish(Event{Type: "start", ID: id})
	}
	if got := b.Dropped(); got != 1 {
		t.Fatalf("dropped %d events, want 1", got)
	}
	for want := range uint64(2) {
		if ev := <-ch; ev.ID != want {
			t.Fatalf("got event %d, want %d", ev.ID, want)
		}
	}
	cancel()
	cancel() // a second call is harmless
	if _, open := <-ch; open {
		t.Fatal("the channel is open after cancel")
	}
	if b.Active() {
		t.Fatal("the bus is active with no subscriber")
	}
	b.Publish(Event{Type: "end"}) // nobody listens: nothing to drop
	if got := b.Dropped(); got != 1 {
		t.Fatalf("dropped %d events after the last subscriber left, want 1", got)
	}
}
