package termtext

import "testing"

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"claude-sonnet-4", "claude-sonnet-4"},
		{"héllo 世界", "héllo 世界"},
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"ok\r\nFAKE 200", `ok\r\nFAKE 200`},
		{"tab\there", `tab\there`},
		{"del\x7f c1\u009b", `del\x7f c1\u009b`},
		{"rtl\u202egnp.exe", `rtl\u202egnp.exe`},
		{"bad\xffutf8", `bad\xffutf8`},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
