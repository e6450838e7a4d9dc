package failure

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// now is the fixed clock of every case.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// classifyCase is one row of TestClassify. The body comes from
// testdata/bodies/<file> when file is set, else from body.
type classifyCase struct {
	name    string
	status  int
	file    string
	body    string
	headers map[string]string
	err     func(t *testing.T) error // a real transport error, made per run
	timeout bool
	cancel  bool
	zeroNow bool // leave Input.Now unset

	want Outcome // Message is compared only through msg
	msg  string  // a substring the Message must contain
}

func failed(k Kind, s Scope) Outcome { return Outcome{Kind: k, Scope: s, Retry: true} }

func hinted(o Outcome, d time.Duration) Outcome { o.RetryAfter = d; return o }

var (
	success     = Outcome{}
	clientFault = Outcome{Kind: KindClient, ClientFault: true}
	canceled    = Outcome{Kind: KindCanceled}
)

// classifyCases holds one row per line of design §6, then the provider
// corpus, soft errors, transport errors and reset hints.
var classifyCases = []classifyCase{
	// design §6, line by line.
	{name: "401_is_key_auth", status: 401, file: "anthropic_401_authentication_error.json", want: failed(KindAuth, ScopeKey), msg: "invalid x-api-key"},
	{name: "403_is_key_auth", status: 403, file: "anthropic_403_permission_error.json", want: failed(KindAuth, ScopeKey)},
	{name: "402_is_key_auth", status: 402, body: `{"error":{"message":"Payment required: add credits to continue","type":"payment_required"}}`, want: failed(KindAuth, ScopeKey)},
	{name: "invalid_key_text_on_400_is_key_auth", status: 400, file: "gemini_400_api_key_invalid.json", want: failed(KindAuth, ScopeKey), msg: "API key not valid"},
	{name: "credit_balance_text_on_400_is_key_auth", status: 400, file: "anthropic_400_credit_balance_too_low.json", want: failed(KindAuth, ScopeKey)},
	{name: "invalid_key_text_on_500_is_key_auth", status: 500, body: `{"error":{"message":"Incorrect API key provided","type":"upstream_error"}}`, want: failed(KindAuth, ScopeKey)},
	{name: "429_is_key_rate_limit", status: 429, file: "anthropic_429_rate_limit_error.json", want: failed(KindRateLimit, ScopeKey)},
	{name: "429_quota_is_key_rate_limit", status: 429, file: "openai_429_insufficient_quota.json", want: failed(KindRateLimit, ScopeKey), msg: "exceeded your current quota"},
	{name: "429_model_cooldown_is_model", status: 429, file: "relay_429_model_cooldown.json", headers: map[string]string{"Retry-After": "42"}, want: hinted(failed(KindRateLimit, ScopeModel), 42*time.Second)},
	{name: "429_model_overloaded_is_model", status: 429, file: "openai_503_overloaded.json", want: failed(KindRateLimit, ScopeModel)},
	{name: "429_load_warning_zh_is_model", status: 429, file: "relay_429_load_zh.json", want: failed(KindRateLimit, ScopeModel)},
	{name: "429_plain_text_load_warning_is_model", status: 429, file: "relay_200_load_warning_en.txt", want: failed(KindRateLimit, ScopeModel)},
	{name: "404_model_not_found_is_model", status: 404, file: "openai_404_model_not_found.json", want: failed(KindNotFound, ScopeModel), msg: "does not exist"},
	{name: "410_is_model", status: 410, body: "Gone", want: failed(KindNotFound, ScopeModel)},
	{name: "5xx_is_model_server", status: 500, file: "anthropic_500_api_error.json", want: failed(KindServer, ScopeModel)},
	{name: "529_is_model_server", status: 529, file: "anthropic_529_overloaded_error.json", want: failed(KindServer, ScopeModel), msg: "Overloaded"},
	{name: "connect_refused_is_url_network", err: refusedErr, want: failed(KindNetwork, ScopeURL), msg: "refused"},
	{name: "tls_error_is_url_network", err: tlsErr, want: failed(KindNetwork, ScopeURL), msg: "certificate"},
	{name: "dns_error_is_url_network", err: dnsErr, want: failed(KindNetwork, ScopeURL), msg: "no such host"},
	{name: "reset_before_headers_is_url_network", err: resetErr, want: failed(KindNetwork, ScopeURL)},
	{name: "eof_before_headers_is_url_network", err: eofErr, want: failed(KindNetwork, ScopeURL), msg: "EOF"},
	{name: "first_byte_timeout_is_url_timeout", timeout: true, want: failed(KindTimeout, ScopeURL)},
	{name: "200_json_error_is_as_embedded", status: 200, file: "anthropic_529_overloaded_error.json", want: failed(KindServer, ScopeModel)},
	{name: "200_sse_error_event_is_as_embedded", status: 200, file: "anthropic_200_sse_overloaded.sse", want: failed(KindServer, ScopeModel), msg: "Overloaded"},
	{name: "200_sse_rate_limit_counts_as_429", status: 200, file: "anthropic_200_sse_rate_limit.sse", want: failed(KindRateLimit, ScopeKey)},
	{name: "200_load_warning_zh_is_model", status: 200, file: "relay_200_load_warning_zh.txt", want: failed(KindServer, ScopeModel), msg: "当前模型负载过高"},
	{name: "200_load_warning_en_is_model", status: 200, file: "relay_200_load_warning_en.txt", want: failed(KindServer, ScopeModel)},
	{name: "400_client_mistake_returns_at_once", status: 400, file: "anthropic_400_prompt_too_long.json", want: clientFault, msg: "prompt is too long"},
	{name: "413_returns_at_once", status: 413, file: "anthropic_413_request_too_large.json", want: clientFault},
	{name: "422_returns_at_once", status: 422, body: `{"detail":[{"loc":["body","messages"],"msg":"field required","type":"value_error.missing"}]}`, want: clientFault},
	{name: "client_canceled_is_no_failure", status: 200, cancel: true, want: canceled},

	// More statuses.
	{name: "400_model_does_not_exist_is_model", status: 400, body: "{\"error\":{\"message\":\"The model `gpt-9` does not exist\",\"type\":\"invalid_request_error\",\"code\":null}}", want: failed(KindNotFound, ScopeModel)},
	{name: "400_model_not_found_code_is_model", status: 400, file: "openai_404_model_not_found.json", want: failed(KindNotFound, ScopeModel)},
	{name: "400_param_not_supported_with_model_is_client", status: 400, file: "openai_400_unsupported_parameter.json", want: clientFault},
	{name: "400_context_length_is_client", status: 400, file: "openai_400_context_length_exceeded.json", want: clientFault},
	{name: "400_gemini_invalid_argument_is_client", status: 400, file: "gemini_400_invalid_argument.json", want: clientFault},
	{name: "405_other_4xx_is_client", status: 405, body: "Method Not Allowed", want: clientFault},
	{name: "408_is_url_timeout", status: 408, want: failed(KindTimeout, ScopeURL)},
	{name: "3xx_is_url_server", status: 302, headers: map[string]string{"Location": "https://elsewhere.example/"}, want: failed(KindServer, ScopeURL), msg: "HTTP 302 Found"},
	{name: "503_no_channel_for_model_is_model_not_found", status: 503, file: "relay_503_no_channel_zh.json", want: failed(KindNotFound, ScopeModel)},
	{name: "502_html_is_model_server", status: 502, file: "html_502_bad_gateway.html", want: failed(KindServer, ScopeModel), msg: "502 Bad Gateway"},
	{name: "500_empty_body_has_status_message", status: 500, want: failed(KindServer, ScopeModel), msg: "HTTP 500 Internal Server Error"},
	{name: "403_region_is_url", status: 403, file: "openai_403_unsupported_country.json", want: failed(KindAuth, ScopeURL)},
	{name: "400_gemini_location_is_url", status: 400, file: "gemini_400_location_unsupported.json", want: failed(KindAuth, ScopeURL)},

	// Provider corpus.
	{name: "anthropic_404_not_found_error_is_model", status: 404, file: "anthropic_404_not_found_error.json", want: failed(KindNotFound, ScopeModel), msg: "claude-3-opus-latest"},
	{name: "openai_401_key_is_redacted", status: 401, file: "openai_401_invalid_api_key.json", want: failed(KindAuth, ScopeKey), msg: "Incorrect API key provided: [redacted]."},
	{name: "openai_429_message_hint", status: 429, file: "openai_429_rate_limit_exceeded.json", want: hinted(failed(KindRateLimit, ScopeKey), 18642*time.Millisecond)},
	{name: "openai_503_overloaded_is_model_server", status: 503, file: "openai_503_overloaded.json", want: failed(KindServer, ScopeModel)},
	{name: "gemini_429_retry_info_hint", status: 429, file: "gemini_429_resource_exhausted.json", want: hinted(failed(KindRateLimit, ScopeKey), 7*time.Second)},
	{name: "gemini_429_vertex_array_is_key", status: 429, file: "gemini_429_vertex_array.json", want: failed(KindRateLimit, ScopeKey), msg: "Resource exhausted"},
	{name: "gemini_404_is_model", status: 404, file: "gemini_404_not_found.json", want: failed(KindNotFound, ScopeModel)},
	{name: "gemini_503_unavailable_is_model_server", status: 503, file: "gemini_503_unavailable.json", want: failed(KindServer, ScopeModel)},
	{name: "gemini_500_internal_is_model_server", status: 500, file: "gemini_500_internal.json", want: failed(KindServer, ScopeModel)},
	{name: "gemini_403_leaked_key_is_key", status: 403, file: "gemini_403_permission_denied.json", want: failed(KindAuth, ScopeKey)},
	{name: "wrapped_gemini_error_429_is_key", status: 429, file: "relay_wrapped_gemini.json", want: failed(KindRateLimit, ScopeKey), msg: "Resource has been exhausted"},
	// A relay's 400 whose message quotes the provider's "API key not valid"
	// mid-sentence is the client's: on a 4xx only structured fields and a
	// provider's opening sentence are read, since mid-message text may
	// quote the request. What this row checks is the redaction.
	{name: "keys_in_messages_are_redacted", status: 400, file: "relay_400_leaks_keys.json", want: clientFault, msg: "key=[redacted]"},

	// A 4xx message that quotes the client's field names cools nothing.
	{name: "gemini_echoed_api_key_invalid_is_client", status: 400, body: `{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"API_KEY_INVALID\": Cannot find field.","status":"INVALID_ARGUMENT"}}`, want: clientFault},
	{name: "openai_echoed_invalid_api_key_is_client", status: 400, body: `{"error":{"message":"Unrecognized request argument supplied: invalid_api_key","type":"invalid_request_error","param":null,"code":null}}`, want: clientFault},
	{name: "echoed_location_is_client", status: 400, body: `{"error":{"message":"Unrecognized request argument supplied: user location is not supported","type":"invalid_request_error","param":null,"code":null}}`, want: clientFault},
	{name: "echoed_model_not_found_is_client", status: 400, body: `{"error":{"message":"Unrecognized request argument supplied: model_not_found","type":"invalid_request_error","param":null,"code":null}}`, want: clientFault},
	{name: "echoed_model_retired_is_client", status: 400, body: `{"error":{"message":"Invalid value for 'model_retired': the model does not exist","type":"invalid_request_error","code":null}}`, want: clientFault},
	{name: "plain_text_400_with_key_words_is_client", status: 400, body: `unknown field "invalid api key"`, want: clientFault},

	// Soft errors.
	{name: "200_json_invalid_token_zh_is_key", status: 200, file: "relay_200_invalid_token_zh.json", want: failed(KindAuth, ScopeKey), msg: "无效的令牌"},
	{name: "200_json_error_string_is_model_server", status: 200, file: "relay_200_error_string.json", want: failed(KindServer, ScopeModel), msg: "context deadline exceeded"},
	{name: "200_responses_failed_is_model_server", status: 200, file: "responses_200_failed.json", want: failed(KindServer, ScopeModel)},
	{name: "200_wrapped_gemini_error_counts_as_429", status: 200, file: "relay_wrapped_gemini.json", want: failed(KindRateLimit, ScopeKey)},
	{name: "200_sse_chat_error_counts_as_429", status: 200, file: "openai_200_sse_chat_error.sse", want: hinted(failed(KindRateLimit, ScopeKey), 120*time.Millisecond)},
	{name: "200_sse_response_failed_is_model_server", status: 200, file: "responses_200_sse_failed.sse", want: failed(KindServer, ScopeModel), msg: "An error occurred"},
	{name: "200_sse_responses_error_event_counts_as_429", status: 200, file: "responses_200_sse_error_event.sse", want: hinted(failed(KindRateLimit, ScopeKey), 520*time.Millisecond)},
	{name: "200_sse_gemini_error_is_model_server", status: 200, file: "gemini_200_sse_error.sse", want: failed(KindServer, ScopeModel)},
	{name: "200_sse_error_after_comments", status: 200, file: "relay_200_sse_comment_then_error.sse", want: failed(KindServer, ScopeModel), msg: "Provider returned error"},
	{name: "200_sse_truncated_error_event", status: 200, body: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_er", want: failed(KindServer, ScopeModel)},
	{name: "200_plain_too_many_requests_is_key", status: 200, file: "relay_200_too_many_requests.txt", want: failed(KindRateLimit, ScopeKey)},

	// Successes, including bodies that talk about errors.
	{name: "200_anthropic_stream_is_ok", status: 200, file: "anthropic_200_sse_ok.sse", want: success},
	{name: "200_chat_stream_is_ok_and_stops_at_done", status: 200, file: "openai_200_sse_chat_ok.sse", want: success},
	{name: "200_chat_json_is_ok", status: 200, file: "openai_200_chat_ok.json", want: success},
	{name: "200_responses_with_null_error_is_ok", status: 200, file: "responses_200_ok.json", want: success},
	{name: "200_responses_stream_is_ok", status: 200, file: "responses_200_sse_ok.sse", want: success},
	{name: "200_gemini_stream_is_ok", status: 200, file: "gemini_200_sse_ok.sse", want: success},
	{name: "200_unknown_plain_text_is_ok", status: 200, file: "relay_200_plain_text_ok.txt", want: success},
	{name: "200_empty_is_ok", status: 200, want: success},
	{name: "204_is_ok", status: 204, want: success},
	{name: "200_body_broke_off_is_url_network", status: 200, body: "event: message_start\n", err: resetErr, want: failed(KindNetwork, ScopeURL)},

	// Transport.
	{name: "context_deadline_is_url_timeout", err: deadlineErr, want: failed(KindTimeout, ScopeURL), msg: "deadline exceeded"},
	{name: "context_canceled_is_canceled", err: canceledErr, want: canceled},
	{name: "fasthttp_dial_timeout_is_url_timeout", err: fasthttpDialTimeout, want: failed(KindTimeout, ScopeURL)},
	{name: "no_response_no_error_is_url_network", want: failed(KindNetwork, ScopeURL)},
	{name: "timeout_flag_wins_over_status", status: 200, timeout: true, want: failed(KindTimeout, ScopeURL)},
	{name: "cancel_flag_wins_over_everything", status: 500, timeout: true, cancel: true, want: canceled},

	// Reset hints.
	{name: "hint_retry_after_seconds", status: 429, headers: map[string]string{"Retry-After": "30"}, want: hinted(failed(KindRateLimit, ScopeKey), 30*time.Second)},
	{name: "hint_retry_after_http_date", status: 429, headers: map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, want: hinted(failed(KindRateLimit, ScopeKey), 90*time.Second)},
	{name: "hint_retry_after_date_in_past_is_none", status: 429, headers: map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, want: failed(KindRateLimit, ScopeKey)},
	{name: "hint_retry_after_garbage_falls_back_to_body", status: 429, file: "gemini_429_resource_exhausted.json", headers: map[string]string{"Retry-After": "soon"}, want: hinted(failed(KindRateLimit, ScopeKey), 7*time.Second)},
	{name: "hint_http_date_without_now_is_ignored", status: 429, headers: map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, zeroNow: true, want: failed(KindRateLimit, ScopeKey)},
	{name: "hint_retry_after_ms_wins", status: 429, headers: map[string]string{"retry-after-ms": "1500", "retry-after": "2"}, want: hinted(failed(KindRateLimit, ScopeKey), 1500*time.Millisecond)},
	{name: "hint_retry_after_beats_body", status: 429, file: "gemini_429_resource_exhausted.json", headers: map[string]string{"retry-after": "3"}, want: hinted(failed(KindRateLimit, ScopeKey), 3*time.Second)},
	{name: "hint_anthropic_reset_of_the_spent_limit", status: 429, file: "anthropic_429_rate_limit_error.json", headers: map[string]string{
		"anthropic-ratelimit-requests-remaining":     "48",
		"anthropic-ratelimit-requests-reset":         now.Add(5 * time.Second).Format(time.RFC3339),
		"anthropic-ratelimit-input-tokens-remaining": "0",
		"anthropic-ratelimit-input-tokens-reset":     now.Add(40 * time.Second).Format(time.RFC3339),
		"anthropic-ratelimit-tokens-reset":           now.Add(20 * time.Second).Format(time.RFC3339),
	}, want: hinted(failed(KindRateLimit, ScopeKey), 40*time.Second)},
	{name: "hint_anthropic_reset_ignored_when_nothing_spent", status: 429, headers: map[string]string{
		"anthropic-ratelimit-requests-remaining": "48",
		"anthropic-ratelimit-requests-reset":     now.Add(5 * time.Second).Format(time.RFC3339),
	}, want: failed(KindRateLimit, ScopeKey)},
	{name: "hint_openai_reset_durations", status: 429, file: "openai_429_rate_limit_exceeded.json", headers: map[string]string{
		"x-ratelimit-remaining-requests": "499",
		"x-ratelimit-reset-requests":     "120ms",
		"x-ratelimit-remaining-tokens":   "0",
		"x-ratelimit-reset-tokens":       "6m0s",
	}, want: hinted(failed(KindRateLimit, ScopeKey), 6*time.Minute)},
	{name: "hint_openai_reset_bare_seconds", status: 429, headers: map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "20"}, want: hinted(failed(KindRateLimit, ScopeKey), 20*time.Second)},
	{name: "hint_reset_headers_only_for_rate_limits", status: 503, headers: map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "6m0s"}, want: failed(KindServer, ScopeModel)},
	{name: "hint_retry_after_on_503", status: 503, file: "gemini_503_unavailable.json", headers: map[string]string{"Retry-After": "10"}, want: hinted(failed(KindServer, ScopeModel), 10*time.Second)},
	{name: "hint_capped_at_max", status: 429, headers: map[string]string{"Retry-After": "99999999999"}, want: hinted(failed(KindRateLimit, ScopeKey), MaxHint)},
	{name: "hint_not_given_to_client_faults", status: 400, headers: map[string]string{"Retry-After": "30"}, want: clientFault},
	{name: "hint_on_200_soft_error_from_headers", status: 200, file: "anthropic_200_sse_rate_limit.sse", headers: map[string]string{"retry-after": "12"}, want: hinted(failed(KindRateLimit, ScopeKey), 12*time.Second)},
}

// leakRe matches the credentials planted in the corpus; no Message may
// contain one.
var leakRe = regexp.MustCompile(`AIzaSy[A-Za-z0-9]|sk-ant-api03-Z|sk-proj-\*|Bearer sk-`)

func TestClassify(t *testing.T) {
	for _, tc := range classifyCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := Input{Status: tc.status, Body: []byte(tc.body), Timeout: tc.timeout, Canceled: tc.cancel, Now: now}
			if tc.file != "" {
				in.Body = readBody(t, tc.file)
			}
			if tc.zeroNow {
				in.Now = time.Time{}
			}
			if tc.headers != nil {
				in.Header = headerFunc(tc.headers)
			}
			if tc.err != nil {
				in.Err = tc.err(t)
				t.Logf("transport error: %v", in.Err)
			}

			got := Classify(in)
			t.Logf("Classify() = %+v", got)

			msg := got.Message
			got.Message = ""
			if got != tc.want {
				t.Errorf("Classify() = %+v\n                   want %+v", got, tc.want)
			}
			if tc.msg != "" && !strings.Contains(msg, tc.msg) {
				t.Errorf("Message = %q, want it to contain %q", msg, tc.msg)
			}
			if leakRe.MatchString(msg) {
				t.Errorf("Message leaks a credential: %q", msg)
			}
			if len(msg) > maxMessage+len("…") {
				t.Errorf("Message is %d bytes, want at most %d", len(msg), maxMessage)
			}
			if !got.OK() && tc.want.Kind != KindOK && msg == "" {
				t.Errorf("a failure has an empty Message")
			}
		})
	}
}

// TestSoftErrorAgreesWithClassify checks that SoftError, which the engine
// calls on peeked stream events, says what Classify says for a 200.
func TestSoftErrorAgreesWithClassify(t *testing.T) {
	for _, tc := range classifyCases {
		if tc.status != 200 || tc.err != nil || tc.timeout || tc.cancel || tc.headers != nil {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			if tc.file != "" {
				body = readBody(t, tc.file)
			}
			got, ok := SoftError(body)
			if ok != (tc.want.Kind != KindOK) {
				t.Fatalf("SoftError() ok = %v, want %v", ok, !ok)
			}
			got.Message = ""
			if got != tc.want {
				t.Errorf("SoftError() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestCorpusIsUsed keeps testdata/bodies free of files no case reads.
func TestCorpusIsUsed(t *testing.T) {
	used := map[string]bool{}
	for _, tc := range classifyCases {
		used[tc.file] = true
	}
	files, err := os.ReadDir(filepath.Join("testdata", "bodies"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !used[f.Name()] {
			t.Errorf("testdata/bodies/%s is used by no TestClassify case", f.Name())
		}
	}
}

func TestParseDelay(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"6m0s":          6 * time.Minute,
		"1s":            time.Second,
		"20ms":          20 * time.Millisecond,
		"7.66s":         7660 * time.Millisecond,
		"2m59.56s":      2*time.Minute + 59560*time.Millisecond,
		"47.434392449s": 47434392449 * time.Nanosecond,
		"30":            30 * time.Second,
		"0.5":           500 * time.Millisecond,
		" 7s ":          7 * time.Second,
		"":              0,
		"soon":          0,
		"NaN":           0,
		"-5":            0,
	} {
		if got := parseDelay(in); got != want {
			t.Errorf("parseDelay(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestCleanMessage(t *testing.T) {
	for in, want := range map[string]string{
		"Incorrect API key provided: kod-460f****2829. You can find": "Incorrect API key provided: [redacted]. You can find",
		"auth with sk-abcd1234efgh5678 failed":                       "auth with sk-[redacted] failed",
		"task-based routing is fine":                                 "task-based routing is fine",
		"GET /v1beta/models?key=AIzaSyA1b2C3d4E5f6G7h8 failed":       "GET /v1beta/models?key=[redacted] failed",
		"header Authorization: Bearer abc.def-ghi":                   "header Authorization: Bearer [redacted]",
		"token xai-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12 bad": "token [redacted] bad",
		"quota generate_content_paid_tier_input_token_count hit":     "quota generate_content_paid_tier_input_token_count hit",
		"many\n\n  spaces\t here":                                    "many spaces here",
	} {
		if got := cleanMessage(in); got != want {
			t.Errorf("cleanMessage(%q)\n  = %q\nwant %q", in, got, want)
		}
	}
	long := strings.Repeat("负", 200) // 3 bytes each: the cut must not split one
	got := cleanMessage(long)
	if !strings.HasSuffix(got, "…") || len(got) > maxMessage+len("…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("cleanMessage(long) = %q", got)
	}
}

func readBody(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "bodies", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// headerFunc looks headers up case-insensitively, as Input.Header promises.
func headerFunc(m map[string]string) func(string) string {
	h := http.Header{}
	for k, v := range m {
		h.Set(k, v)
	}
	return h.Get
}
