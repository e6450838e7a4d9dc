package request

import (
	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/signature"
)

// resolveSignatures decides, for every signature in the client's history,
// what the target gets (docs/reasoning.md): the original, byte for byte,
// when the target's own channel minted it (its tag names that channel), and
// nothing otherwise. A thinking part without its signature is then unsigned
// reasoning, which each encoder treats as it always has (Anthropic and
// Responses leave it out, Gemini keeps the thought text, Chat has no place
// for it); redacted thinking of another upstream is left out whole. The
// conversion path never sends a signature to its own family, so an
// untagged one (native traffic) is always foreign here.
func (r *Req) resolveSignatures(client, target protocol.Family, to signature.Origin) {
	dropped := 0
	for i := range r.Msgs {
		m := &r.Msgs[i]
		parts := m.Parts[:0]
		for _, p := range m.Parts {
			switch p.Kind {
			case PartThinking:
				if p.Sig != "" {
					sig, ok := signature.For(p.Sig, client, to)
					if !ok || r.opt.DropSignatures {
						sig = ""
						dropped++
					}
					p.Sig = sig
				}
			case PartRedacted:
				data, ok := signature.For(p.Data, client, to)
				if !ok || r.opt.DropSignatures {
					dropped++
					continue
				}
				p.Data = data
			}
			parts = append(parts, p)
		}
		m.Parts = parts
	}
	if dropped > 0 && target != protocol.OpenAI { // Chat takes no reasoning at all
		r.note("%d reasoning signature(s) left out: minted by another upstream, which alone can verify them", dropped)
	}
}

// anthUnsignedLoop reports whether the final assistant turn calls a tool
// without starting with signed thinking: Anthropic then refuses a request
// with thinking on ("a final assistant message must start with a thinking
// block"), which happens when that turn's reasoning came from another
// upstream. Such a request is sent without thinking (docs/reasoning.md).
func anthUnsignedLoop(r *Req) bool {
	for i := len(r.Msgs) - 1; i >= 0; i-- {
		m := &r.Msgs[i]
		if m.Role != RoleAssistant {
			continue
		}
		calls := false
		first := PartKind(255)
		for j := range m.Parts {
			p := &m.Parts[j]
			if first == 255 && anthKeeps(p) {
				first = p.Kind
			}
			calls = calls || p.Kind == PartToolCall
		}
		return calls && first != PartThinking && first != PartRedacted
	}
	return false
}
