package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ccload/ccload/config"
	"github.com/ccload/ccload/engine/account"
	"github.com/ccload/ccload/store"
)

// seedAccounts stores the subscription accounts the dashboard's accounts
// test expects on the codex channel ch, sealed with secretKey as `ccload
// login` seals them: alice ok with quota windows and three requests
// today, bob exhausted for two more hours, carol invalid (the provider
// refused her refresh token). The config names a fourth, dave, who has no
// row and so is signed_out.
func seedAccounts(ctx context.Context, st store.Store, ch, secretKey string) error {
	key, ok := config.ParseSecretKey(secretKey)
	if !ok {
		return fmt.Errorf("-secret-key is not 32 bytes in hex or base64")
	}
	now := time.Now()
	quota := func(primary, secondary float64) string {
		b, _ := json.Marshal(account.Quota{
			Primary:   &account.Window{UsedPercent: primary, WindowMinutes: 300, ResetsAt: now.Add(3 * time.Hour).Truncate(time.Second)},
			Secondary: &account.Window{UsedPercent: secondary, WindowMinutes: 10080, ResetsAt: now.Add(100 * time.Hour).Truncate(time.Second)},
		})
		return string(b)
	}
	rows := []store.Account{
		{Account: "alice", State: store.AccountOK, Quota: quota(42, 13)},
		{Account: "bob", State: store.AccountOK, Quota: quota(100, 61), ExhaustedUntil: now.Add(2 * time.Hour)},
		{Account: "carol", State: store.AccountInvalid, Reason: "refresh_token_reused: Your refresh token has already been used"},
	}
	for _, a := range rows {
		// Far-off expiry: the server must not try to refresh these
		// against a real issuer while the test runs.
		cred := account.Credential{AccessToken: "e2e-access-" + a.Account, RefreshToken: "e2e-refresh-" + a.Account,
			AccountID: "acct-" + a.Account, Expires: now.Add(8 * 24 * time.Hour), Issued: now.Add(-time.Hour)}
		blob, err := account.Seal(key, ch, a.Account, cred)
		if err != nil {
			return err
		}
		a.Channel, a.Provider, a.Credential = ch, config.OAuthCodex, blob
		a.SubjectFP = "acct…" + a.Account[:1]
		a.AccessExpires, a.LastRefresh = cred.Expires, now.Add(-time.Hour)
		if err := st.PutAccount(ctx, a); err != nil {
			return err
		}
	}
	logs := make([]store.LogRow, 3)
	for i := range logs {
		logs[i] = store.LogRow{Time: now.Add(-time.Duration(i+1) * time.Minute), RequestID: fmt.Sprintf("seed-acct-%d", i),
			Token: "alice", Channel: ch, KeyFP: "account:alice", URL: "http://127.0.0.1:9/codex", ClientProtocol: "responses",
			UpstreamProtocol: "responses", Model: "gpt-5.4", UpstreamModel: "gpt-5.4", Attempts: 1, Status: 200,
			DurationMs: 900, Cost: 0.0125, AttemptsJSON: "[]", ClientIP: "127.0.0.1"}
	}
	return st.InsertLogs(ctx, logs)
}
