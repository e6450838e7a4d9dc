package admin

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/ccload/ccload/admin/adminapi"
	"github.com/ccload/ccload/engine/account"
)

// GET /admin/accounts serves account.Status; adminapi.Account is its copy
// for clients (ccload top). Every field set, the JSON must survive the
// round trip through the copy unchanged.
func TestAccountViewMatchesStatusJSON(t *testing.T) {
	t1, t2, t3 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 3, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 4, 3, 4, 5, 0, time.UTC)
	s := account.Status{Channel: "c", Account: "a", Provider: "codex", State: "exhausted", Reason: "r",
		ExhaustedUntil: &t1, AccessExpires: &t2, LastRefresh: &t3, Subject: "acct…x", RequestsToday: 7, CostToday: 1.25,
		Quota: account.Quota{Primary: &account.Window{UsedPercent: 42.5, WindowMinutes: 300, ResetsAt: t1},
			Secondary: &account.Window{UsedPercent: 13, WindowMinutes: 10080, ResetsAt: t2}}}
	a, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var wire adminapi.Account
	dec := json.NewDecoder(bytes.NewReader(a))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wire); err != nil {
		t.Fatalf("adminapi.Account cannot read the server's form: %v\n%s", err, a)
	}
	sameJSON(t, s, wire)
}
