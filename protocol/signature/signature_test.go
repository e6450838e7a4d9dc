package signature

import (
	"encoding/base64"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
)

func TestTagGoesBackOnlyToItsMinter(t *testing.T) {
	a := NewOrigin(protocol.Anthropic, "claude-main")
	a2 := NewOrigin(protocol.Anthropic, "claude-backup")
	g := NewOrigin(protocol.Gemini, "claude-main")
	sig := "EqQBCkYIARgCIkAsig=="
	tagged := a.Tag(sig)
	if tagged == sig || !IsTagged(tagged) || Original(tagged) != sig {
		t.Fatalf("Tag(%q) = %q", sig, tagged)
	}
	if a.Tag(tagged) != tagged {
		t.Error("a tagged signature was tagged twice")
	}
	if got, ok := For(tagged, protocol.Gemini, a); !ok || got != sig {
		t.Errorf("to its minter: %q, %v", got, ok)
	}
	for _, o := range []Origin{a2, g, {}} {
		if got, ok := For(tagged, protocol.Anthropic, o); ok {
			t.Errorf("to %v: %q kept", o, got)
		}
	}
	// Untagged: the client family's own (native traffic).
	if got, ok := For(sig, protocol.Anthropic, a2); !ok || got != sig {
		t.Errorf("untagged to the client's family: %q, %v", got, ok)
	}
	if _, ok := For(sig, protocol.Anthropic, g); ok {
		t.Error("untagged signature sent to another family")
	}
}

func TestBase64KeepsEveryTaggedSignatureForGeminiClients(t *testing.T) {
	r := NewOrigin(protocol.Responses, "codex")
	for _, orig := range []string{"gAAAAABpVVoh-_x==", "bW9jaw==", "not base64 at all"} {
		tagged := r.Tag(orig)
		out, ok := Base64(tagged)
		if !ok {
			t.Fatalf("Base64(%q) refused", tagged)
		}
		if _, err := base64.StdEncoding.DecodeString(out); err != nil {
			t.Errorf("Base64(%q) = %q: not standard base64", tagged, out)
		}
		if got, ok := For(out, protocol.Gemini, r); !ok || got != orig {
			t.Errorf("round trip of %q: %q, %v", orig, got, ok)
		}
	}
	if _, ok := Base64("gAAAA-_"); ok {
		t.Error("an untagged non-base64 signature was accepted")
	}
}

func TestNativeLeavesUntaggedBodiesAlone(t *testing.T) {
	body := []byte(`{"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"x","signature":"abc"}]}]}`)
	out, changed, err := Native(protocol.Anthropic, body, NewOrigin(protocol.Anthropic, "a"), false, "m")
	if err != nil || changed || &out[0] != &body[0] {
		t.Fatalf("untagged body changed: %s %v %v", out, changed, err)
	}
}

func TestNativeAnthropic(t *testing.T) {
	a := NewOrigin(protocol.Anthropic, "a")
	g := NewOrigin(protocol.Gemini, "g")
	body := `{"thinking":{"type":"enabled","budget_tokens":2000},"messages":[
{"role":"user","content":"hi"},
{"role":"assistant","content":[{"type":"thinking","thinking":"mine","signature":"` + a.Tag("OWN=") + `"},{"type":"tool_use","id":"t1","name":"f","input":{}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]},
{"role":"assistant","content":[{"type":"thinking","thinking":"theirs","signature":"` + g.Tag("GEM=") + `"},{"type":"tool_use","id":"t2","name":"f","input":{}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]}]}`
	out, changed, err := Native(protocol.Anthropic, []byte(body), a, false, "m")
	if err != nil || !changed {
		t.Fatal(err, changed)
	}
	if got := gjson.GetBytes(out, "messages.1.content.0.signature").Str; got != "OWN=" {
		t.Errorf("own signature = %q", got)
	}
	if got := gjson.GetBytes(out, "messages.3.content.0.type").Str; got != "tool_use" {
		t.Errorf("foreign thinking kept: %s", out)
	}
	if gjson.GetBytes(out, "thinking").Exists() {
		t.Errorf("thinking kept on for a loop without signed thinking: %s", out)
	}
}

func TestNativeResponsesAndGemini(t *testing.T) {
	r := NewOrigin(protocol.Responses, "r")
	a := NewOrigin(protocol.Anthropic, "a")
	body := `{"input":[{"type":"reasoning","encrypted_content":"` + r.Tag("gAAA-own") + `"},{"type":"reasoning","encrypted_content":"` + a.Tag("EqQ=") + `"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`
	out, _, err := Native(protocol.Responses, []byte(body), r, false, "m")
	if err != nil {
		t.Fatal(err)
	}
	items := gjson.GetBytes(out, "input").Array()
	if len(items) != 2 || items[0].Get("encrypted_content").Str != "gAAA-own" {
		t.Errorf("responses: %s", out)
	}
	gm := NewOrigin(protocol.Gemini, "g")
	body = `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":"` + a.Tag("EqQ=") + `"}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]},{"role":"model","parts":[{"text":"t","thought":true,"thoughtSignature":"` + a.Tag("X0==") + `"},{"functionCall":{"name":"f","args":{}},"thoughtSignature":"` + gm.Tag("R2Vt") + `"}]}]}`
	out, _, err = Native(protocol.Gemini, []byte(body), gm, false, "gemini-3-pro-preview")
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(out, "contents.1.parts.0.thoughtSignature").Str; got != SkipValidator {
		t.Errorf("foreign call signature = %q", got)
	}
	if gjson.GetBytes(out, "contents.3.parts.0.thoughtSignature").Exists() {
		t.Errorf("foreign thought signature kept: %s", out)
	}
	if got := gjson.GetBytes(out, "contents.3.parts.1.thoughtSignature").Str; got != "R2Vt" {
		t.Errorf("own signature = %q", got)
	}
}
