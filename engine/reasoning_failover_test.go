package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/ccloadtest/mockupstream"
	"github.com/ccload/ccload/protocol/signature"
)

// Sessions that think and call tools, failing over mid-session between
// families (docs/reasoning.md). Each mock upstream signs its reasoning and
// refuses any signature it did not sign with the provider's own 400
// (mockupstream Options.Signer), so a foreign signature reaching an
// upstream fails these tests as it fails in production. The retry without
// signatures would hide such a failure, so each test also counts the
// requests every upstream got: a retry is one more.

const reasoningConfig = `version: 1
server: {admin_password: test}
storage: {driver: sqlite, dsn: "{{DB}}"}
routing:
  # The first channel's failure must not rank it below the second once it
  # is back: the test brings it back by clearing its cooldown.
  health_score: {enabled: false}
channels:
  - name: first
    priority: 10
    urls: [{url: "{{URLA}}", protocols: [{{FAMA}}]}]
    keys: [key-first-000001]
    models: [{name: m1, upstream: {{MODELA}}}]
  - name: second
    priority: 5
    urls: [{url: "{{URLB}}", protocols: [{{FAMB}}]}]
    keys: [key-second-00001]
    models: [{name: m1, upstream: {{MODELB}}}]
tokens:
  - name: tester
    token_sha256: "{{TOKEN_SHA}}"
`

// reasoningModels are upstream models whose names make the mock call the
// request's first tool until a tool result comes back ("mock-tool"); the
// Gemini one is a Gemini 3 model, which validates call signatures.
var reasoningModels = map[string]string{
	famAnthropic: "claude-sonnet-mock-tool",
	famResponses: "gpt-5-mock-tool",
	famGemini:    "gemini-3-pro-mock-tool",
}

// thinkingUpstream is a signing mock of one family that thinks before each
// answer and answers 500 while down.
type thinkingUpstream struct {
	family string
	mock   *mockupstream.Server
	url    string
	down   atomic.Bool
}

func startThinking(t *testing.T, family, signer string) *thinkingUpstream {
	u := &thinkingUpstream{family: family}
	u.mock, u.url = startMock(t, mockupstream.Options{Signer: signer, Script: func(r *mockupstream.Recorded) mockupstream.Reply {
		if u.down.Load() {
			return mockupstream.Reply{Status: 500, Text: "down for the test"}
		}
		rep := mockupstream.DefaultReply(r)
		rep.Thinking = "Thinking at " + signer + "."
		return rep
	}})
	return u
}

// answered counts the requests the upstream answered 200.
func (u *thinkingUpstream) requests() []mockupstream.Recorded { return u.mock.Requests() }

// reasoningGateway serves m1 from channel first (family a, priority) and
// second (family b).
func reasoningGateway(t *testing.T, a, b *thinkingUpstream) *gateway {
	cfg := strings.NewReplacer(
		"{{URLA}}", a.url, "{{FAMA}}", a.family, "{{MODELA}}", reasoningModels[a.family],
		"{{URLB}}", b.url, "{{FAMB}}", b.family, "{{MODELB}}", reasoningModels[b.family],
	).Replace(reasoningConfig)
	return startGateway(t, cfg)
}

// clientSession is a conversation as a client of one family keeps it: the
// history it replays in full on every turn, answers appended as received.
type clientSession struct {
	family string
	hist   []string // JSON of each message / input item / content
	calls  []sessionCall
}

type sessionCall struct{ id, name string }

func (s *clientSession) user(text string) {
	q, _ := json.Marshal(text)
	switch s.family {
	case famAnthropic:
		s.hist = append(s.hist, `{"role":"user","content":`+string(q)+`}`)
	case famResponses:
		s.hist = append(s.hist, `{"type":"message","role":"user","content":[{"type":"input_text","text":`+string(q)+`}]}`)
	case famGemini:
		s.hist = append(s.hist, `{"role":"user","parts":[{"text":`+string(q)+`}]}`)
	}
}

// toolResults answers the calls of the last answer.
func (s *clientSession) toolResults() {
	var parts []string
	for _, c := range s.calls {
		switch s.family {
		case famAnthropic:
			parts = append(parts, `{"type":"tool_result","tool_use_id":"`+c.id+`","content":"42"}`)
		case famResponses:
			s.hist = append(s.hist, `{"type":"function_call_output","call_id":"`+c.id+`","output":"42"}`)
		case famGemini:
			parts = append(parts, `{"functionResponse":{"name":"`+c.name+`","response":{"output":"42"}}}`)
		}
	}
	switch s.family {
	case famAnthropic:
		s.hist = append(s.hist, `{"role":"user","content":[`+strings.Join(parts, ",")+`]}`)
	case famGemini:
		s.hist = append(s.hist, `{"role":"user","parts":[`+strings.Join(parts, ",")+`]}`)
	}
	s.calls = nil
}

const lookupSchema = `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`

// send posts the session to the gateway, appends the answer to the history
// and returns it; any status but 200 fails the test.
func (s *clientSession) send(t *testing.T, g *gateway) string {
	t.Helper()
	hist := "[" + strings.Join(s.hist, ",") + "]"
	var url, body string
	hdr := map[string]string{}
	switch s.family {
	case famAnthropic:
		url = g.URL + "/v1/messages"
		hdr["x-api-key"], hdr["anthropic-version"] = testToken, "2023-06-01"
		body = `{"model":"m1","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":2048},"tools":[{"name":"lookup","input_schema":` + lookupSchema + `}],"messages":` + hist + `}`
	case famResponses:
		url = g.URL + "/v1/responses"
		hdr["Authorization"] = "Bearer " + testToken
		body = `{"model":"m1","store":false,"include":["reasoning.encrypted_content"],"reasoning":{"effort":"medium","summary":"auto"},"tools":[{"type":"function","name":"lookup","parameters":` + lookupSchema + `}],"input":` + hist + `}`
	case famGemini:
		url = g.URL + "/v1beta/models/m1:generateContent"
		hdr["x-goog-api-key"] = testToken
		body = `{"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}},"tools":[{"functionDeclarations":[{"name":"lookup","parameters":` + lookupSchema + `}]}],"contents":` + hist + `}`
	}
	resp, out := post(t, url, body, hdr)
	if resp.StatusCode != 200 {
		t.Fatalf("%s client: status %d: %s", s.family, resp.StatusCode, out)
	}
	switch s.family {
	case famAnthropic:
		s.hist = append(s.hist, `{"role":"assistant","content":`+gjson.Get(out, "content").Raw+`}`)
		for _, b := range gjson.Get(out, `content.#(type=="tool_use")#`).Array() {
			s.calls = append(s.calls, sessionCall{b.Get("id").Str, b.Get("name").Str})
		}
	case famResponses:
		for _, it := range gjson.Get(out, "output").Array() {
			s.hist = append(s.hist, it.Raw)
			if it.Get("type").Str == "function_call" {
				s.calls = append(s.calls, sessionCall{it.Get("call_id").Str, it.Get("name").Str})
			}
		}
	case famGemini:
		s.hist = append(s.hist, gjson.Get(out, "candidates.0.content").Raw)
		for _, p := range gjson.Get(out, "candidates.0.content.parts").Array() {
			if fc := p.Get("functionCall"); fc.Exists() {
				s.calls = append(s.calls, sessionCall{fc.Get("id").Str, fc.Get("name").Str})
			}
		}
	}
	return out
}

// signatures lists the reasoning signatures of an answer as the client
// got them.
func clientSignatures(family, out string) []string {
	var paths []string
	switch family {
	case famAnthropic:
		paths = []string{`content.#(type=="thinking")#.signature`}
	case famResponses:
		paths = []string{`output.#(type=="reasoning")#.encrypted_content`}
	case famGemini:
		paths = []string{`candidates.0.content.parts.#.thoughtSignature`}
	}
	var sigs []string
	for _, p := range paths {
		for _, v := range gjson.Get(out, p).Array() {
			if v.Str != "" {
				sigs = append(sigs, v.Str)
			}
		}
	}
	return sigs
}

var thinkingFamilies = []string{famAnthropic, famResponses, famGemini}

// A thinking + tool session of each client family whose first channel
// fails mid-session continues on a channel of each other family, and again
// on the first when it returns; no error reaches the client, no upstream
// ever sees a signature it did not mint, and none needed a retry.
func TestReasoningSessionFailsOverAcrossFamilies(t *testing.T) {
	for _, fa := range thinkingFamilies {
		for _, fb := range thinkingFamilies {
			if fa == fb {
				continue
			}
			t.Run(fa+"-then-"+fb, func(t *testing.T) {
				a := startThinking(t, fa, "provider-a")
				b := startThinking(t, fb, "provider-b")
				g := reasoningGateway(t, a, b)
				s := &clientSession{family: fa}

				s.user("Look up the answer.")
				out := s.send(t, g) // a: thinking, then a tool call
				if len(s.calls) != 1 || len(clientSignatures(fa, out)) == 0 {
					t.Fatalf("first turn on %s: want a signed thought and a call: %s", fa, out)
				}
				a.down.Store(true)
				s.toolResults()
				s.send(t, g) // a fails: b answers the tool loop a began
				s.user("And once more?")
				out = s.send(t, g) // b again (a is cooling): thinking and a call
				if len(s.calls) != 1 {
					t.Fatalf("third turn on %s: want a call: %s", fb, out)
				}
				for _, sig := range clientSignatures(fa, out) {
					if !signature.IsTagged(sig) {
						t.Errorf("signature of %s handed to a %s client untagged: %q", fb, fa, sig)
					}
				}
				a.down.Store(false)
				for _, e := range g.Engine.Cooldowns().List() {
					g.Engine.Cooldowns().Clear(e.Key)
				}
				s.toolResults()
				s.send(t, g) // a is back: it answers b's tool loop

				ra, rb := a.requests(), b.requests()
				if len(ra) != 3 || len(rb) != 2 {
					t.Fatalf("requests: first %d (want 3: the first turn, its failure, the fourth), second %d (want 2): a retry or a missed failover", len(ra), len(rb))
				}
				// b got its own signature back byte for byte in the third turn's
				// loop... b's third-turn signature returns to a as nothing.
				minted := upstreamSignatures(fb, rb[1].Body)
				if len(minted) == 0 {
					t.Errorf("third turn: %s got no reasoning of its own back: %s", fb, rb[1].Body)
				}
				for _, body := range [][]byte{ra[2].Body, rb[0].Body, rb[1].Body} {
					if strings.Contains(string(body), signature.Magic) {
						t.Errorf("a tag reached an upstream: %s", body)
					}
				}
			})
		}
	}
}

// upstreamSignatures lists the signatures a request body of family carries.
func upstreamSignatures(family string, body []byte) []string {
	var paths []string
	switch family {
	case famAnthropic:
		paths = []string{`messages.#.content.#(type=="thinking")#.signature|@flatten`}
	case famResponses:
		paths = []string{`input.#(type=="reasoning")#.encrypted_content`}
	case famGemini:
		paths = []string{`contents.#.parts.#.thoughtSignature|@flatten`}
	}
	var sigs []string
	for _, p := range paths {
		for _, v := range gjson.GetBytes(body, p).Array() {
			if v.Str != "" && v.Str != signature.SkipValidator {
				sigs = append(sigs, v.Str)
			}
		}
	}
	return sigs
}

// On one channel nothing changes: each upstream gets its own signatures
// back byte for byte, natively (the client's family) and through a
// conversion (another family), and signs again.
func TestReasoningOneChannelSendsSignaturesBackUnchanged(t *testing.T) {
	for _, fc := range thinkingFamilies {
		for _, fu := range thinkingFamilies {
			t.Run(fc+"-on-"+fu, func(t *testing.T) {
				u := startThinking(t, fu, "provider-a")
				spare := startThinking(t, fu, "spare")
				g := reasoningGateway(t, u, spare)
				s := &clientSession{family: fc}
				s.user("Look up the answer.")
				first := s.send(t, g)
				s.toolResults()
				s.send(t, g)
				reqs := u.requests()
				if len(reqs) != 2 || len(spare.requests()) != 0 {
					t.Fatalf("requests: %d on the channel, %d on the spare; want 2 and 0", len(reqs), len(spare.requests()))
				}
				got := upstreamSignatures(fu, reqs[1].Body)
				var want []string
				for _, sig := range clientSignatures(fc, first) {
					want = append(want, signature.Original(sig))
				}
				if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("second turn sent %q, want the signatures of the first turn %q", got, want)
				}
				native := fc == fu
				for _, sig := range clientSignatures(fc, first) {
					if signature.IsTagged(sig) == native {
						t.Errorf("client got %q: native traffic is handed over as it is, a conversion tags it", sig)
					}
				}
			})
		}
	}
}

// A signature the client's family minted on another channel of that
// family (another account or provider, untagged: native traffic) is
// refused there with a 400; the gateway retries once without signatures
// and the session goes on.
func TestReasoningSignatureRefusedIsRetriedWithoutSignatures(t *testing.T) {
	for _, f := range thinkingFamilies {
		t.Run(f, func(t *testing.T) {
			a := startThinking(t, f, "provider-a")
			b := startThinking(t, f, "provider-b")
			g := reasoningGateway(t, a, b)
			s := &clientSession{family: f}
			s.user("Look up the answer.")
			s.send(t, g)
			a.down.Store(true)
			s.toolResults()
			s.send(t, g)
			rb := b.requests()
			if len(rb) != 2 {
				t.Fatalf("second channel got %d requests, want 2 (refused, then retried)", len(rb))
			}
			if len(upstreamSignatures(f, rb[0].Body)) == 0 {
				t.Errorf("first try carried no signature: %s", rb[0].Body)
			}
			if sigs := upstreamSignatures(f, rb[1].Body); len(sigs) != 0 {
				t.Errorf("retry still carried %q", sigs)
			}
		})
	}
}
