package convert

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccload/ccload/protocol"
	"github.com/ccload/ccload/protocol/convert/internal/gjwalk"
	"github.com/ccload/ccload/protocol/convert/request"
)

// toolOrigin is what a function name sent upstream stands for in the
// client's request: a tool inside a namespace, a custom (freeform) tool, or
// both.
type toolOrigin struct {
	namespace string // "" outside a namespace
	name      string // the client's own name of the tool
	custom    bool   // freeform: the call comes back as custom_tool_call with input
}

// clientTools maps the names sent upstream to their origin, for the tools
// whose calls the client expects in a shape other than a plain function
// call. nil when there are none (the common case).
type clientTools map[string]toolOrigin

// clientToolsOf reads the client's request for the tools a converted
// answer must reshape: a Responses client's namespaced and custom tools (in
// tools and in additional_tools input items). A cheap byte check skips the
// parse for the requests that have neither.
func clientToolsOf(client protocol.Family, req []byte) clientTools {
	if client != protocol.Responses || len(req) == 0 {
		return nil
	}
	if !strings.Contains(bstr(req), `"namespace"`) && !strings.Contains(bstr(req), `"custom"`) {
		return nil
	}
	var m clientTools
	add := func(ns string, t gjson.Result) {
		typ := t.Get("type").Str
		if typ != "custom" && (typ != "function" || ns == "") {
			return
		}
		if m == nil {
			m = make(clientTools)
		}
		// Clones: gjson's strings are slices of the whole request, which a
		// stream would otherwise keep alive through this map.
		name := strings.Clone(t.Get("name").Str)
		ns = strings.Clone(ns)
		flat := name
		if ns != "" {
			flat = request.FlatToolName(ns, name)
		}
		m[flat] = toolOrigin{namespace: ns, name: name, custom: typ == "custom"}
	}
	scan := func(tools gjson.Result) {
		gjwalk.ForEach(tools, func(_, t gjson.Result) bool {
			if t.Get("type").Str == "namespace" {
				ns := t.Get("name").Str
				gjwalk.ForEach(t.Get("tools"), func(_, nt gjson.Result) bool {
					add(ns, nt)
					return true
				})
				return true
			}
			add("", t)
			return true
		})
	}
	root := gjson.ParseBytes(req)
	scan(root.Get("tools"))
	gjwalk.ForEach(root.Get("input"), func(_, it gjson.Result) bool {
		if it.Get("type").Str == "additional_tools" {
			scan(it.Get("tools"))
		}
		return true
	})
	return m
}

// customInput is the freeform input of a call to a custom tool offered as a
// function with one string argument: args is {"input": "..."}. A model that
// answered with some other object gets its single string field, or the JSON
// text itself, so nothing it wrote is lost.
func customInput(args string) string {
	a := gjson.Parse(args)
	if in := a.Get("input"); in.Type == gjson.String {
		return in.Str
	}
	var only gjson.Result
	n := 0
	gjwalk.ForEach(a, func(_, v gjson.Result) bool {
		only = v
		n++
		return n < 2
	})
	if n == 1 && only.Type == gjson.String {
		return only.Str
	}
	return args
}
