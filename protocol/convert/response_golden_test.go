package convert

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestResponseGolden(t *testing.T) {
	if goldenUpdate() {
		writeCorpusGoldens(t, "response", ".json")
	}
	for _, path := range goldenFiles(t, "response") {
		t.Run(goldenName(path), func(t *testing.T) {
			from, to := goldenPair(t, path)
			ar := readArchive(t, path)
			got, err := response(from, to, ar.get(t, "in.json"), testModel, ResponseOptions{Request: ar.opt("request.json"), Origin: goldenOrigin(from)}, testClock{})
			if goldenUpdate() {
				if err == nil {
					var ind bytes.Buffer
					if e := json.Indent(&ind, got, "", "  "); e != nil {
						t.Fatalf("output is not JSON: %v\n%s", e, got)
					}
					ind.WriteByte('\n')
					ar.set("want.json", ind.Bytes())
				} else {
					ar.set("want.json", nil)
				}
				ar.set("error", errText(err))
				writeArchive(t, path, ar)
				return
			}
			if want := ar.opt("error"); string(errText(err)) != string(want) {
				t.Fatalf("error = %v, want %q", err, want)
			}
			if err != nil {
				return
			}
			g, err1 := canonData(got)
			w, err2 := canonData(ar.get(t, "want.json"))
			if err1 != nil || err2 != nil {
				t.Fatalf("not JSON: got %v, want %v\n%s", err1, err2, got)
			}
			if g != w {
				t.Fatalf("response differs\n got: %s\nwant: %s", g, w)
			}
		})
	}
}
