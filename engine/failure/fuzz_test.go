package failure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// seedCorpus adds every body of testdata/bodies to a fuzz target.
func seedCorpus(f *testing.F, add func(body []byte)) {
	files, err := os.ReadDir(filepath.Join("testdata", "bodies"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range files {
		b, err := os.ReadFile(filepath.Join("testdata", "bodies", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		add(b)
	}
}

// checkOutcome holds the invariants every Outcome keeps.
func checkOutcome(t *testing.T, o Outcome) {
	t.Helper()
	switch {
	case o.ClientFault && (o.Retry || o.Scope != ScopeNone || o.RetryAfter != 0):
		t.Fatalf("a client fault is retried, scoped or hinted: %+v", o)
	case o.Kind == KindOK && o != (Outcome{}):
		t.Fatalf("a success carries data: %+v", o)
	case o.Kind == KindCanceled && (o.Retry || o.Scope != ScopeNone):
		t.Fatalf("a cancellation is retried or scoped: %+v", o)
	case o.Retry && o.Scope == ScopeNone:
		t.Fatalf("a retried failure has no scope: %+v", o)
	case o.RetryAfter < 0 || o.RetryAfter > MaxHint:
		t.Fatalf("hint out of range: %+v", o)
	case len(o.Message) > maxMessage+len("…"):
		t.Fatalf("Message too long: %d bytes", len(o.Message))
	case !utf8.ValidString(o.Message):
		t.Fatalf("Message is not UTF-8: %q", o.Message)
	}
}

func FuzzClassify(f *testing.F) {
	for _, st := range []int{200, 400, 429, 503} {
		seedCorpus(f, func(b []byte) { f.Add(st, b, "12", "0", "6m0s") })
	}
	f.Add(429, []byte(`{"error":{"message":"{\"error\":{\"message\":\"[{\"}}"}}`), "Wed, 21 Oct 2015 07:28:00 GMT", "", "")
	f.Fuzz(func(t *testing.T, status int, body []byte, retryAfter, remaining, reset string) {
		h := map[string]string{
			"retry-after":                  retryAfter,
			"x-ratelimit-remaining-tokens": remaining,
			"x-ratelimit-reset-tokens":     reset,
		}
		o := Classify(Input{
			Status: status % 1000,
			Header: func(k string) string { return h[strings.ToLower(k)] },
			Body:   body,
			Now:    now,
		})
		checkOutcome(t, o)
	})
}

func FuzzSoftError(f *testing.F) {
	seedCorpus(f, func(b []byte) { f.Add(b) })
	f.Add([]byte("event: error\ndata: [1,2"))
	f.Add([]byte("data: \"x\"\n\ndata: {\"error\":[]}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		o, ok := SoftError(body)
		if ok == (o.Kind == KindOK) {
			t.Fatalf("SoftError() = %+v, %v", o, ok)
		}
		checkOutcome(t, o)
	})
}
