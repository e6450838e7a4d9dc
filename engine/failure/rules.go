package failure

import (
	"regexp"
	"strings"
)

// The text tables. Every entry is lower case and matched as a substring of
// the upstream error's haystack (type, code, status, details[].reason and
// message; or the raw body when it is not JSON). To teach ccload a new
// upstream phrasing, add a line here and a body to testdata/bodies.

// overloadTexts say that the model (not the key) is out of capacity. They
// turn a 429 into a model-scope cooldown, and make a plain-text HTTP 200 body
// a model/server error (the "load warnings" of design §6).
var overloadTexts = []string{
	"model_cooldown",      // structured code of gateways: every credential for the model is cooling
	"overloaded",          // Anthropic overloaded_error; OpenAI "That model is currently overloaded"; Gemini "The model is overloaded"
	"capacity",            // "no capacity available", "at capacity"
	"high demand",         // Gemini "This model is currently experiencing high demand"
	"model load too high", // "Current model load too high, please try again later"
	"当前模型负载过高",            // relays: "current model load too high"
	"负载已饱和",               // relays: "upstream load saturated"
	"服务器繁忙",               // DeepSeek and relays: "server busy"
	"系统繁忙",                // "system busy"
}

// rateLimitTexts make a plain-text HTTP 200 body a key rate limit.
var rateLimitTexts = []string{
	"too many requests",
	"rate limit exceeded",
	"rate limit reached",
	"请求过于频繁", // "requests too frequent"
	"请求频率过高", // "request rate too high"
}

// keyTexts say that the upstream key is invalid, expired, revoked or unpaid,
// whatever the status code (design §6).
var keyTexts = []string{
	"api_key_invalid",           // Gemini ErrorInfo.reason, with a 400
	"api key not valid",         // Gemini
	"api key expired",           // Gemini
	"api key not found",         // Gemini
	"key has expired",           //
	"reported as leaked",        // Gemini 403 "Your API key was reported as leaked"
	"invalid_api_key",           // OpenAI code
	"incorrect api key",         // OpenAI message
	"invalid api key",           //
	"invalid x-api-key",         // Anthropic message
	"authentication_error",      // Anthropic type, in any status
	"invalid_authentication",    // OpenAI-compatible
	"account_deactivated",       // OpenAI
	"access_terminated",         // OpenAI
	"billing_not_active",        // OpenAI
	"billing_error",             // Anthropic
	"credit balance is too low", // Anthropic, with a 400
	"无效的令牌",                     // relays (one-api family): "invalid token"
	"令牌已过期",                     // relays: "token expired"
	"余额不足",                      // relays: "insufficient balance"
}

// regionTexts say that the upstream refuses the place the request comes from.
// Another URL (egress, proxy) may work; another key will not.
var regionTexts = []string{
	"user location is not supported",              // Gemini 400 FAILED_PRECONDITION
	"unsupported_country_region_territory",        // OpenAI 403 code
	"country, region, or territory not supported", // OpenAI 403 message
}

// modelMissingTexts say that the model does not exist or was retired.
var modelMissingTexts = []string{
	"model_not_found",           // OpenAI code (also on 400/503 from gateways)
	"model_decommissioned",      // Groq and others
	"model not found",           //
	"no such model",             //
	"unknown model",             //
	"not found for api version", // Gemini "models/x is not found for API version v1beta"
	"模型不存在",                     // relays: "model does not exist"
	"无可用渠道",                     // relays (one-api family): "no channel available for model"
}

// modelGoneTexts say that something was removed; they count only when the
// haystack also says "model", so that "tool x does not exist" stays a client
// mistake.
var modelGoneTexts = []string{
	"does not exist",
	"decommissioned",
	"no longer supported",
	"no longer available",
	"has been deprecated",
	"retired",
}

func modelMissing(text string) bool {
	return containsAny(text, modelMissingTexts) ||
		strings.Contains(text, "model") && containsAny(text, modelGoneTexts)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// The leads are sentences providers open a 4xx message with. On a 4xx only
// the opening of the message is read (see echoes): the providers quote a
// client's input after their own words, never before them.

// keyLeads open the message of a 4xx that blames the key.
var keyLeads = []string{
	"your credit balance is too low", // Anthropic 400 invalid_request_error
	"api key not valid",              // Gemini 400 (its ErrorInfo reason says so too)
	"api key expired",                // Gemini 400
	"incorrect api key provided",     // OpenAI 401
}

// regionLeads open the message of a 4xx that refuses the egress region.
var regionLeads = []string{
	"user location is not supported",              // Gemini 400 FAILED_PRECONDITION
	"country, region, or territory not supported", // OpenAI 403
}

// modelGoneRe is a 4xx message that opens by saying the model is missing
// or retired: "The model `gpt-9` does not exist". The model it names is
// the channel's upstream model, never the client's string.
var modelGoneRe = regexp.MustCompile("(?i)^the model [`'\"]?[^\\s`'\"]+[`'\"]? (does not exist|has been decommissioned|has been deprecated|has been retired|is no longer (supported|available))\\b")

// leads reports whether msg opens with one of prefixes, ignoring case.
func leads(msg string, prefixes []string) bool {
	msg = strings.TrimSpace(msg)
	for _, p := range prefixes {
		if len(msg) >= len(p) && strings.EqualFold(msg[:len(p)], p) {
			return true
		}
	}
	return false
}
