package admin

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ccload/ccload/engine"
	"github.com/ccload/ccload/engine/live"
)

// fill sets every exported field of the struct v points to a non-zero
// value, different per field, so a field the conversion forgets shows.
func fill(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v).Elem()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		if !rv.Type().Field(i).IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("s" + rv.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Uint64:
			f.SetUint(uint64(i + 1))
		case reflect.Float64:
			f.SetFloat(float64(i) + 0.5)
		default:
			switch f.Interface().(type) {
			case time.Time:
				f.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
			case time.Duration:
				f.SetInt(int64(i+1) * int64(time.Millisecond))
			default:
				t.Fatalf("fill: field %s of kind %s: teach fill about it", rv.Type().Field(i).Name, f.Kind())
			}
		}
	}
}

func sameJSON(t *testing.T, engineForm, wireForm any) {
	t.Helper()
	a, err := json.Marshal(engineForm)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(wireForm)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatalf("wire form differs from the engine's:\nengine %s\nwire   %s", a, b)
	}
}

// The admin API used to serve live.Event and engine.ProbeResult as they
// are; adminapi has its own copies so that clients need no engine. These
// tests keep the JSON identical when a field is added on either side.
func TestEventViewMatchesEngineJSON(t *testing.T) {
	var e live.Event
	fill(t, &e)
	sameJSON(t, e, eventView(e))
}

func TestProbeViewMatchesEngineJSON(t *testing.T) {
	var r engine.ProbeResult
	fill(t, &r)
	sameJSON(t, r, probeView(r))
}
