package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/schema"
)

func compile(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.JSON))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("ccload.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("ccload.schema.json")
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return sch
}

// fromYAML converts a YAML file to the JSON value an editor would validate:
// aliases and merge keys resolved, timestamps as the strings they were
// written as.
func fromYAML(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return jsonValue(v)
}

func jsonValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = jsonValue(x)
		}
		return v
	case map[any]any:
		out := map[string]any{}
		for k, x := range v {
			out[fmt.Sprint(k)] = jsonValue(x)
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = jsonValue(x)
		}
		return v
	case time.Time: // yaml.v3 turns 2027-01-01 into a time.Time
		if v.Equal(v.Truncate(24*time.Hour)) && v.Location() == time.UTC {
			return v.Format(time.DateOnly)
		}
		return v.Format(time.RFC3339Nano)
	}
	return v
}

// corpus is every file the config package must load: its good corpus and
// the example.
func corpus(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../config/testdata/good/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no config corpus: %v", err)
	}
	return append(files, "../ccload.example.yaml")
}

func TestGoodFilesValidate(t *testing.T) {
	sch := compile(t)
	for _, f := range corpus(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(fromYAML(t, data)); err != nil {
				t.Errorf("%s does not validate:\n%v", f, err)
			}
		})
	}
}

// TestBadFilesFail: files the decoder rejects for their shape are rejected
// by the schema too, so an editor flags them as you type.
func TestBadFilesFail(t *testing.T) {
	sch := compile(t)
	for _, name := range []string{
		"unknown_key", "wrong_type", "bad_storage", "bad_protocol", "bad_key_strategy", "bad_rewrite",
		"token_secret", "version_missing", "version_wrong", "bad_size", "bad_duration", "bad_hours",
		"bad_pricing", "bad_url", "channel_rule", "bad_check",
	} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile("../config/testdata/bad/" + name + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(fromYAML(t, data)); err == nil {
				t.Errorf("%s.yaml validates, want it rejected", name)
			}
		})
	}
}

// TestKeysMatchDecoder: every mapping the decoder knows has the same keys
// in the schema, and every object of the schema is one the decoder knows.
func TestKeysMatchDecoder(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(schema.JSON, &root); err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	for section, keys := range config.KnownKeys() {
		obj, ptr := objectAt(t, root, section)
		if obj == nil {
			continue
		}
		reached[ptr] = true
		props, _ := obj["properties"].(map[string]any)
		var inSchema []string
		for k := range props {
			inSchema = append(inSchema, k)
		}
		sort.Strings(inSchema)
		want := slices.Sorted(slices.Values(keys))
		if !slices.Equal(inSchema, want) {
			t.Errorf("%q (%s): schema has %v, decoder accepts %v", section, ptr, inSchema, want)
		}
	}
	walk(root, "#", func(ptr string, s map[string]any) {
		if _, ok := s["properties"]; !ok || s["type"] != "object" {
			return // not an object declaration (an "if" condition, say)
		}
		if !reached[ptr] {
			t.Errorf("schema object %s is no mapping the decoder reads", ptr)
		}
		if s["additionalProperties"] != false {
			t.Errorf("schema object %s lacks additionalProperties: false", ptr)
		}
	})
}

// objectAt finds the object schema of a KnownKeys section ("channels[].urls[]",
// "pricing.*"), following $ref and choosing the object branch of anyOf.
func objectAt(t *testing.T, root map[string]any, section string) (map[string]any, string) {
	t.Helper()
	cur, ptr := root, "#"
	step := func(key string) bool {
		next, ok := cur[key].(map[string]any)
		if !ok {
			t.Errorf("section %q: no %q at %s", section, key, ptr)
			return false
		}
		cur, ptr = deref(root, next, ptr+"/"+key)
		return true
	}
	if section != "" {
		for _, seg := range strings.Split(section, ".") {
			if seg == "*" {
				if !step("additionalProperties") {
					return nil, ""
				}
				continue
			}
			props, _ := cur["properties"].(map[string]any)
			name := strings.TrimSuffix(seg, "[]")
			p, ok := props[name].(map[string]any)
			if !ok {
				t.Errorf("section %q: schema %s has no property %q", section, ptr, name)
				return nil, ""
			}
			cur, ptr = deref(root, p, ptr+"/properties/"+name)
			if strings.HasSuffix(seg, "[]") && !step("items") {
				return nil, ""
			}
			cur, ptr = objectBranch(root, cur, ptr)
		}
	}
	if cur["type"] != "object" {
		t.Errorf("section %q: %s is not an object schema", section, ptr)
		return nil, ""
	}
	return cur, ptr
}

// deref follows a local "$ref": "#/$defs/name".
func deref(root, s map[string]any, ptr string) (map[string]any, string) {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s, ptr
		}
		name := strings.TrimPrefix(ref, "#/$defs/")
		s, ptr = root["$defs"].(map[string]any)[name].(map[string]any), ref
	}
}

// objectBranch picks the object schema among anyOf/oneOf branches (a
// model is a string or an object).
func objectBranch(root, s map[string]any, ptr string) (map[string]any, string) {
	for _, kw := range []string{"anyOf", "oneOf"} {
		branches, _ := s[kw].([]any)
		for i, b := range branches {
			bs, bp := deref(root, b.(map[string]any), fmt.Sprintf("%s/%s/%d", ptr, kw, i))
			if bs["type"] == "object" {
				return bs, bp
			}
		}
	}
	return s, ptr
}

// walk calls fn for every schema object under v.
func walk(v any, ptr string, fn func(string, map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(ptr, v)
		for k, x := range v {
			if k == "properties" || k == "$defs" { // maps of name -> schema
				for name, s := range x.(map[string]any) {
					walk(s, ptr+"/"+k+"/"+name, fn)
				}
				continue
			}
			walk(x, ptr+"/"+k, fn)
		}
	case []any:
		for i, x := range v {
			walk(x, fmt.Sprintf("%s/%d", ptr, i), fn)
		}
	}
}
