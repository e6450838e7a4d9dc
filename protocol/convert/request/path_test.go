package request

import (
	"fmt"
	"testing"
)

// The paths in error messages read as the fmt.Sprintf calls they replace
// wrote them.
func TestAtReadsAsSprintf(t *testing.T) {
	for _, c := range []struct {
		got  at
		want string
	}{
		{at{}.in("messages", 3).in(".content", 1), fmt.Sprintf("messages[%d].content[%d]", 3, 1)},
		{at{}.in("messages", 0).in(".content", -1), "messages[0].content"},
		{at{}.in("input", 12).in(".output", -1).in("", 2), "input[12].output[2]"},
		{at{}.in("contents", 1).in(".parts", 0).in(".functionResponse.parts", 4).in(".inlineData", -1),
			"contents[1].parts[0].functionResponse.parts[4].inlineData"},
		{at{}, ""},
	} {
		if s := c.got.String(); s != c.want {
			t.Errorf("%s, want %s", s, c.want)
		}
	}
	deep := at{}.in("a", 0).in(".b", 1).in(".c", 2).in(".d", 3).in(".e", 4)
	if s := deep.String(); s != "a[0].b[1].c[2].d[3]" {
		t.Errorf("past four levels: %s, want the outer four kept", s)
	}
}
