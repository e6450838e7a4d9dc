//go:build soak

package soak

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
)

// fault is one way an upstream attempt goes wrong.
type fault string

const (
	fault401   fault = "401"
	fault429   fault = "429 (retry-after 2s)"
	fault404   fault = "404 model not found"
	fault500   fault = "500"
	fault529   fault = "529/503 overloaded"
	faultSoft  fault = "200 with error body / SSE error event"
	faultReset fault = "connection reset"
	faultSlow  fault = "slow first byte (1.5s > first_byte 1s)"
	faultCut   fault = "cut after the first event"
)

// faults are drawn with equal odds. "200 with error" and "SSE error" are one
// entry: which one an attempt gets depends on whether it streams.
var faults = []fault{fault401, fault429, fault404, fault500, fault529, faultSoft, faultReset, faultSlow, faultCut}

// Markers in the user text that the script reads.
const (
	markerNormal = "soak-normal"
	markerSlow   = "soak-slow-stream" // no fault, slow events: a stream held open across SIGTERM
)

// faultScript decides every upstream attempt: with probability rate one
// fault drawn from faults, else the default answer. It counts what it did.
type faultScript struct {
	rate float64

	mu       sync.Mutex
	attempts int
	injected map[fault]int
}

func newFaultScript(rate float64) *faultScript {
	return &faultScript{rate: rate, injected: map[fault]int{}}
}

func (s *faultScript) reply(r *mockupstream.Recorded) mockupstream.Reply {
	if bytes.Contains(r.Body, []byte(markerSlow)) {
		return mockupstream.Reply{EventDelay: 300 * time.Millisecond}
	}
	var f fault
	if rand.Float64() < s.rate {
		f = faults[rand.IntN(len(faults))]
	}
	s.mu.Lock()
	s.attempts++
	if f != "" {
		s.injected[f]++
	}
	s.mu.Unlock()
	switch f {
	case fault401:
		return mockupstream.Reply{Status: 401, Text: "invalid api key"}
	case fault429:
		return mockupstream.Reply{Status: 429, Text: "rate limit exceeded", Header: map[string]string{"retry-after": "2"}}
	case fault404:
		return mockupstream.Reply{Status: 404, Text: "model not found: " + r.Model}
	case fault500:
		return mockupstream.Reply{Status: 500, Text: "internal error"}
	case fault529:
		return scenario(r, "fail-529")
	case faultSoft:
		return scenario(r, "soft-error")
	case faultReset:
		return mockupstream.Reply{CutAfterEvents: -1}
	case faultSlow:
		return mockupstream.Reply{FirstByteDelay: 1500 * time.Millisecond}
	case faultCut:
		return mockupstream.Reply{CutAfterEvents: 1}
	}
	return mockupstream.Reply{}
}

// scenario is the mock's own answer for a named scenario.
func scenario(r *mockupstream.Recorded, name string) mockupstream.Reply {
	cp := *r
	cp.Header = r.Header.Clone()
	cp.Header.Set(mockupstream.ScenarioHeader, name)
	return mockupstream.DefaultReply(&cp)
}

func (s *faultScript) counts() (attempts int, injected map[fault]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[fault]int, len(s.injected))
	for k, v := range s.injected {
		out[k] = v
	}
	return s.attempts, out
}

// expectedScope is the cooldown scope an attempt's failure must name, from
// what the upstream did (design §6), independent of the engine's
// classifier: auth and rate limits are the key's, missing models and
// server errors the model's, transport failures the URL's.
func expectedScope(status int, kind string) string {
	switch {
	case status == 401 || status == 429:
		return "key"
	case status == 404 || status >= 500:
		return "model"
	case kind == "network" || kind == "timeout":
		return "url"
	case status == 200:
		return "model" // an error inside an HTTP 200: overloaded
	}
	return "url" // no status: reset or timeout before headers
}
