package request

import (
	"strconv"

	"github.com/ccload/ccload/protocol"
)

// writer is an append-based JSON writer. It only inserts the commas: callers
// write keys and values in order, so the output keeps the order we choose and
// costs one growing buffer. raw values must be valid JSON (they come from a
// body already checked by validObject).
type writer struct {
	b        []byte
	stack    []bool // per open container: has an element already
	afterKey bool
}

func newWriter(size int) *writer {
	return &writer{b: make([]byte, 0, size), stack: make([]bool, 0, 16)}
}

func (w *writer) sep() {
	if w.afterKey {
		w.afterKey = false
		return
	}
	if n := len(w.stack); n > 0 {
		if w.stack[n-1] {
			w.b = append(w.b, ',')
		}
		w.stack[n-1] = true
	}
}

func (w *writer) key(k string) {
	w.sep()
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
	w.afterKey = true
}

func (w *writer) obj()         { w.open('{') }
func (w *writer) arr()         { w.open('[') }
func (w *writer) endObj()      { w.close('}') }
func (w *writer) endArr()      { w.close(']') }
func (w *writer) str(s string) { w.sep(); w.b = appendString(w.b, s) }
func (w *writer) raw(r string) { w.sep(); w.b = append(w.b, r...) }
func (w *writer) int(i int64)  { w.sep(); w.b = strconv.AppendInt(w.b, i, 10) }
func (w *writer) bool(v bool)  { w.sep(); w.b = strconv.AppendBool(w.b, v) }

func (w *writer) open(c byte) {
	w.sep()
	w.b = append(w.b, c)
	w.stack = append(w.stack, false)
}

func (w *writer) close(c byte) {
	w.b = append(w.b, c)
	w.stack = w.stack[:len(w.stack)-1]
}

// Shorthands for a key and its value.
func (w *writer) kstr(k, v string) { w.key(k); w.str(v) }
func (w *writer) kraw(k, v string) { w.key(k); w.raw(v) }
func (w *writer) kint(k string, v int64) {
	w.key(k)
	w.int(v)
}

// kopt writes a raw number when it is set.
func (w *writer) kopt(k, v string) {
	if v != "" {
		w.kraw(k, v)
	}
}

// appendString appends s as a JSON string (protocol.AppendJSONString).
func appendString(b []byte, s string) []byte { return protocol.AppendJSONString(b, s) }

// estimateSize guesses the encoded size to allocate the buffer once.
func estimateSize(r *Req) int {
	n := 256
	for _, s := range r.System {
		n += len(s) + 32
	}
	for i := range r.Msgs {
		for j := range r.Msgs[i].Parts {
			p := &r.Msgs[i].Parts[j]
			n += len(p.Text) + len(p.Data) + len(p.Args) + len(p.Input) + len(p.Sig) + 64
			for k := range p.Content {
				n += len(p.Content[k].Text) + len(p.Content[k].Data) + 32
			}
		}
	}
	for i := range r.Tools {
		n += len(r.Tools[i].Desc) + len(r.Tools[i].Params) + 64
	}
	return n + n/8
}

// kbool writes a boolean member.
func (w *writer) kbool(k string, v bool) {
	w.key(k)
	w.bool(v)
}

// ktri writes an optional boolean member when it is set.
func (w *writer) ktri(k string, v Tri) {
	if v != TriUnset {
		w.kbool(k, v == TriTrue)
	}
}

// kstrs writes a list of strings when it has any.
func (w *writer) kstrs(k string, list []string) {
	if len(list) == 0 {
		return
	}
	w.key(k)
	w.arr()
	for _, s := range list {
		w.str(s)
	}
	w.endArr()
}
