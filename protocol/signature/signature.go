// Package signature tags the reasoning signatures ccload hands a client with
// the upstream that minted them, and reads the tag back on the client's next
// turn.
//
// A reasoning signature (Anthropic thinking.signature and redacted_thinking
// data, Responses reasoning encrypted_content, Gemini thoughtSignature) is
// valid only at the provider that minted it: any other answers 400. A client
// replays them verbatim, so the origin can ride inside the signature
// itself, with no state kept by the gateway:
//
//	tagged = "cCLd" + family + form + channel + body
//
// family is one letter (A anthropic, O openai, R responses, G gemini); form
// says how body holds the original: 's' as it is, 'b' as standard base64 of
// its bytes (for a Gemini client, whose SDKs decode thoughtSignature as
// standard base64, when the original is not); channel is ten hex digits of
// a SHA-256 of the channel's name. The 16-character header uses only the
// base64 alphabet and is a multiple of four long, so a tagged standard
// base64 signature is still standard base64, and a streamed signature is
// tagged by putting the header before its first fragment.
//
// Untagged signatures are those of native traffic (ccload relays a client's
// own family untouched) or from before the client used ccload: they belong
// to the client's own family.
package signature

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/ccload/ccload/protocol"
)

// Magic starts every tagged signature. Provider signatures start otherwise
// (Anthropic's and Gemini's are base64 protobufs starting "E" or "C",
// OpenAI's "gAAAAA"), and the rest of the header must parse too.
const Magic = "cCLd"

// HeaderLen is the length of the tag header.
const HeaderLen = 16

// The forms of the body after the header.
const (
	formPlain  = 's' // the original, as it is
	formBase64 = 'b' // standard base64 of the original's bytes
)

// Origin is the upstream a signature comes from: its family and channel.
// Its header is computed once (NewOrigin), so tagging costs a copy.
type Origin struct {
	Family  protocol.Family
	Channel string
	header  string // Magic + family + 's' + channel hash
}

// NewOrigin returns the origin of signatures minted by a channel speaking
// family.
func NewOrigin(family protocol.Family, channel string) Origin {
	sum := sha256.Sum256([]byte(channel))
	h := Magic + string(familyLetter(family)) + string(rune(formPlain)) + hex.EncodeToString(sum[:5])
	return Origin{Family: family, Channel: channel, header: h}
}

// Set reports whether o names an upstream (the zero Origin does not: no
// tagging, and every tagged signature is foreign to it).
func (o Origin) Set() bool { return o.header != "" }

// Header is the tag header put before an original kept as it is.
func (o Origin) Header() string { return o.header }

// Tag returns sig tagged with o ("" stays ""; an already tagged signature
// and an unset origin leave sig as it is).
func (o Origin) Tag(sig string) string {
	if sig == "" || !o.Set() || IsTagged(sig) {
		return sig
	}
	return o.header + sig
}

// Base64 returns a tagged signature as standard base64, the form a Gemini
// client needs: unchanged when it is already, else re-tagged with the
// original's bytes encoded. ok is false for a signature that is neither
// tagged nor standard base64 (it cannot be given to a Gemini client).
func Base64(sig string) (string, bool) {
	if sig == "" {
		return "", false
	}
	if isStdBase64(sig) {
		return sig, true
	}
	fam, ch, orig, ok := parse(sig)
	if !ok {
		return "", false
	}
	out := Magic + string(fam) + string(rune(formBase64)) + ch + base64.StdEncoding.EncodeToString([]byte(orig))
	return out, true
}

// IsTagged reports whether sig carries a tag header.
func IsTagged(sig string) bool {
	_, _, _, ok := parse(sig)
	return ok
}

// Original returns the signature as its minter made it: the body of a
// tagged signature, or sig itself when untagged.
func Original(sig string) string {
	if _, _, orig, ok := parse(sig); ok {
		return orig
	}
	return sig
}

// For returns what to send to the upstream to for a signature found in a
// client's request, and whether to send it at all. A signature tagged by
// to's own channel and family goes back as its original, byte for byte; a
// signature tagged by any other upstream is foreign (false). An untagged
// signature belongs to client, the client's family (native traffic): it is
// kept when to speaks that family, foreign otherwise.
func For(sig string, client protocol.Family, to Origin) (string, bool) {
	fam, ch, orig, ok := parse(sig)
	if !ok {
		return sig, client == to.Family
	}
	if !to.Set() || fam != familyLetter(to.Family) || ch != to.header[6:HeaderLen] {
		return "", false
	}
	return orig, true
}

// parse splits a tagged signature into its family letter, channel hash and
// original.
func parse(sig string) (fam byte, channel, orig string, ok bool) {
	if len(sig) <= HeaderLen || !strings.HasPrefix(sig, Magic) {
		return 0, "", "", false
	}
	fam = sig[4]
	if letterFamily(fam) == "" {
		return 0, "", "", false
	}
	channel = sig[6:HeaderLen]
	for i := 0; i < len(channel); i++ {
		if c := channel[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return 0, "", "", false
		}
	}
	body := sig[HeaderLen:]
	switch sig[5] {
	case formPlain:
		return fam, channel, body, true
	case formBase64:
		b, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			return 0, "", "", false
		}
		return fam, channel, string(b), true
	}
	return 0, "", "", false
}

func familyLetter(f protocol.Family) byte {
	switch f {
	case protocol.Anthropic:
		return 'A'
	case protocol.OpenAI:
		return 'O'
	case protocol.Responses:
		return 'R'
	case protocol.Gemini:
		return 'G'
	}
	return 'X'
}

func letterFamily(b byte) protocol.Family {
	switch b {
	case 'A':
		return protocol.Anthropic
	case 'O':
		return protocol.OpenAI
	case 'R':
		return protocol.Responses
	case 'G':
		return protocol.Gemini
	}
	return ""
}

func isStdBase64(s string) bool {
	if len(s)%4 != 0 {
		return false
	}
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}

// Contains reports whether a body may carry a tagged signature: the cheap
// test that lets native traffic without one go through untouched.
func Contains(body []byte) bool {
	return bytes.Contains(body, []byte(Magic))
}
