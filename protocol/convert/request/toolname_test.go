package request

import (
	"strings"
	"testing"
)

func TestFlatToolName(t *testing.T) {
	cases := []struct{ ns, name, want string }{
		{"crm", "find", "crm__find"},
		{"functions", "exec", "functions__exec"},
		{"mcp.files v2", "read file", "mcp_files_v2__read_file_485e613e"},
		{"a__b", "c", "a__b__c_"}, // prefix only: a hash follows
		{"a", "b__c", "a__b__c_"},
		{"9lives", "x", "_9lives__x_"},
		{strings.Repeat("n", 80), "tool", strings.Repeat("n", 55) + "_"},
	}
	seen := map[string]string{}
	for _, c := range cases {
		got := FlatToolName(c.ns, c.name)
		if !validToolName(got) {
			t.Errorf("FlatToolName(%q, %q) = %q breaks the name rules", c.ns, c.name, got)
		}
		if strings.HasSuffix(c.want, "_") && !strings.HasPrefix(got, c.want) || !strings.HasSuffix(c.want, "_") && got != c.want {
			t.Errorf("FlatToolName(%q, %q) = %q, want %q…", c.ns, c.name, got, c.want)
		}
		if FlatToolName(c.ns, c.name) != got {
			t.Errorf("FlatToolName(%q, %q) is not stable", c.ns, c.name)
		}
		if prev, ok := seen[got]; ok {
			t.Errorf("%q and %q share the name %q", prev, c.ns+"/"+c.name, got)
		}
		seen[got] = c.ns + "/" + c.name
	}
}
