package request

import "strconv"

// at is where a value sits in a client body, "messages[3].content[1]",
// for error messages. The decoders hand it down for every message, block
// and part of a request; it becomes text only when an error is written
// (fmt's %s calls String), where a fmt.Sprintf per element was a twentieth
// of converting an agent's request (perf).
type at struct {
	n     int
	names [4]string
	idx   [4]int // -1: the name has no index
}

// in is p followed by name and, unless i is -1, the index [i].
func (p at) in(name string, i int) at {
	if p.n == len(p.names) { // deeper than any decoder goes: keep the outermost
		return p
	}
	p.names[p.n], p.idx[p.n] = name, i
	p.n++
	return p
}

func (p at) String() string {
	var b []byte
	for k := range p.n {
		b = append(b, p.names[k]...)
		if p.idx[k] >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(p.idx[k]), 10)
			b = append(b, ']')
		}
	}
	return string(b)
}
