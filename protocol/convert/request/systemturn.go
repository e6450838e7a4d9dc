package request

import "strings"

// systemTurnText marks an instruction that sits inside the conversation, for
// families whose conversation has no system turns.
func systemTurnText(s string) string { return "<system>\n" + s + "\n</system>" }

// systemTurn recognises a marked instruction in a user turn, so the
// mapping reverses when such a request comes back through this package.
func systemTurn(s string) (string, bool) {
	inner, ok := strings.CutPrefix(s, "<system>\n")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(inner, "\n</system>")
}

// addUser adds a user turn, lifting marked instructions (systemTurn) back
// into system turns.
func (r *Req) addUser(parts []Part) {
	start := 0
	for i := range parts {
		if parts[i].Kind != PartText {
			continue
		}
		text, ok := systemTurn(parts[i].Text)
		if !ok || len(r.Msgs) == 0 {
			continue
		}
		r.addMsg(RoleUser, parts[start:i]...)
		r.addSystem(text)
		start = i + 1
	}
	r.addMsg(RoleUser, parts[start:]...)
}
