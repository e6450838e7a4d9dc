package request

// The reasoning budget <-> effort table (documented in doc.go).
var effortBudgets = map[string]int64{
	"minimal": 1024,
	"low":     4096,
	"medium":  16384,
	"high":    32768,
	"xhigh":   49152,
	"max":     65536,
}

// budgetEffort maps a token budget to an effort level.
func budgetEffort(b int64) string {
	switch {
	case b <= 0:
		return "none"
	case b < 8192:
		return "low"
	case b < 24576:
		return "medium"
	}
	return "high"
}

// effort is the effort level a target with levels should get, "" for the
// target's default.
func (r Reasoning) effort() string {
	if r.Effort != "" {
		return r.Effort
	}
	if r.Budget > 0 {
		return budgetEffort(r.Budget)
	}
	return ""
}

// budget is the token budget a target with budgets should get, 0 for none.
func (r Reasoning) budget() int64 {
	if r.Budget > 0 {
		return r.Budget
	}
	return effortBudgets[r.Effort]
}

var knownEfforts = map[string]bool{"none": true, "minimal": true, "low": true, "medium": true, "high": true, "xhigh": true, "max": true}

func checkEffort(e, field string) error {
	if !knownEfforts[e] {
		return badRequest("%s: unknown effort %q", field, e)
	}
	return nil
}
