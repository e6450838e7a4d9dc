package admin_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ccload/ccload/admin/adminapi"
)

// TestStatusListsInstances: /admin/status and /admin/channels list this
// instance (marked self, even before its first heartbeat) and every other
// one whose heartbeat is in the database.
func TestStatusListsInstances(t *testing.T) {
	a := start(t)
	b := startOn(t, a.Src.Current().Storage.DSN.Reveal())
	var st adminapi.Status
	resp, body := a.call(t, "GET", "/admin/status", map[string]string{"Authorization": "Bearer " + adminPass}, "")
	if err := json.Unmarshal([]byte(body), &st); resp.StatusCode != 200 || err != nil {
		t.Fatalf("status: %d %v %s", resp.StatusCode, err, body)
	}
	if len(st.Instances) != 1 || !st.Instances[0].Self || st.Instances[0].ID != st.Instance ||
		st.Instances[0].Address != a.URL[len("http://"):] || st.Instances[0].Version != "v-test" || st.InstancesError != "" {
		t.Fatalf("before any heartbeat: instance %q, list %+v", st.Instance, st.Instances)
	}

	if err := b.Member.Beat(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ch adminapi.ChannelsResponse
	resp, body = a.call(t, "GET", "/admin/channels", map[string]string{"Authorization": "Bearer " + adminPass}, "")
	if err := json.Unmarshal([]byte(body), &ch); resp.StatusCode != 200 || err != nil {
		t.Fatalf("channels: %d %v %s", resp.StatusCode, err, body)
	}
	if len(ch.Instances) != 2 {
		t.Fatalf("after B's heartbeat: %+v, want A and B", ch.Instances)
	}
	for _, in := range ch.Instances {
		if self := in.ID == a.Member.Self().ID; in.Self != self || !self && in.ID != b.Member.Self().ID {
			t.Errorf("instance %+v: want A (self) and B", in)
		}
	}
}
