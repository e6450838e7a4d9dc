package engine

import (
	"bytes"
	"testing"
)

// TestBodyClassFits: a body gets the smallest class that holds it, and
// every class is one of the pools.
func TestBodyClassFits(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{1, 0}, {pooledBodyClass0, 0}, {pooledBodyClass0 + 1, 1}, {2 * pooledBodyClass0, 1},
		{2*pooledBodyClass0 + 1, 2}, {pooledBodyMax, len(bodyPools) - 1},
	} {
		got := bodyClass(c.n)
		if got != c.want {
			t.Errorf("bodyClass(%d) = %d, want %d", c.n, got, c.want)
		}
		if pooledBodyClass0<<got < c.n {
			t.Errorf("class %d holds %d bytes, less than %d", got, pooledBodyClass0<<got, c.n)
		}
	}
}

// TestCopyBodyCopiesAndGivesBack: the copy is src's bytes in a buffer of
// its class; given back, it is poisoned under the race detector (the
// engine's tests then see any view kept past dropBody); a body over the
// largest class is not pooled.
func TestCopyBodyCopiesAndGivesBack(t *testing.T) {
	src := bytes.Repeat([]byte(`{"model":"m"}`), 3000) // 39 KB: pooled in every build
	b, bp := copyBody(src)
	if bp == nil || !bytes.Equal(b, src) || &b[0] == &src[0] {
		t.Fatalf("copyBody of %d bytes: pooled %v, equal %v", len(src), bp != nil, bytes.Equal(b, src))
	}
	if cap(*bp) != pooledBodyClass0<<bodyClass(len(src)) {
		t.Fatalf("buffer of %d bytes for a %d-byte body, want its class's %d", cap(*bp), len(src), pooledBodyClass0<<bodyClass(len(src)))
	}
	giveBody(bp)
	if poisonBodies && b[0] != '~' {
		t.Fatalf("a given-back body reads %q, want it overwritten", b[:10])
	}
	if _, bp := copyBody(make([]byte, pooledBodyMax+1)); bp != nil {
		t.Fatal("a body over pooledBodyMax was pooled")
	}
}
