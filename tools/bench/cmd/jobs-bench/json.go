package main

import (
	"encoding/json"
	"os"
	"time"
)

// jsonIntake and jsonLag are the results as -json writes them.
type jsonIntake struct {
	Name        string  `json:"name"`
	N           int     `json:"n"`
	Clients     int     `json:"clients"`
	PerRequest  int     `json:"per_request"`
	AcceptedPS  float64 `json:"accepted_per_s"`
	TookS       float64 `json:"took_s"`
	ArmedAfterS float64 `json:"armed_after_s"`
	Armed       int64   `json:"armed"`
	Errors      int64   `json:"errors"`
}

type jsonLag struct {
	N              int     `json:"n"`
	SpreadS        float64 `json:"spread_s"`
	WholeSeconds   bool    `json:"whole_seconds"`
	BudgetS        float64 `json:"budget_s"`
	ArmedBeforeDue int64   `json:"armed_before_due"`
	FireP50MS      float64 `json:"fire_p50_ms"`
	FireP99MS      float64 `json:"fire_p99_ms"`
	FireMaxMS      float64 `json:"fire_max_ms"`
	CallbackP50MS  float64 `json:"callback_p50_ms"`
	CallbackP99MS  float64 `json:"callback_p99_ms"`
	CallbackMaxMS  float64 `json:"callback_max_ms"`
	HeapPerJob     float64 `json:"heap_per_pending_job_bytes"`
	Fires          int     `json:"fires"`
	Calls          int64   `json:"calls"`
	CallSpanS      float64 `json:"call_span_s"`
	LastAfterDueS  float64 `json:"last_callback_after_first_due_s"`
	DrainCPUS      float64 `json:"drain_cpu_s"`
	LastOutcomeS   float64 `json:"last_outcome_after_first_due_s"`
	Errors         int64   `json:"errors"`
}

// writeJSON writes the results to o.jsonOut; pending, when not nil, is
// the pending case's.
func writeJSON(o options, intake []intakeResult, lags []lagResult, pending *pendingResult) error {
	msf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var out struct {
		Intake  []jsonIntake `json:"intake"`
		Lag     []jsonLag    `json:"lag"`
		Pending *jsonPending `json:"pending,omitempty"`
	}
	if pending != nil {
		p := pending.json()
		out.Pending = &p
	}
	for _, r := range intake {
		out.Intake = append(out.Intake, jsonIntake{Name: r.name, N: r.n, Clients: r.clients, PerRequest: r.perRequest,
			AcceptedPS: r.rate(), TookS: r.took.Seconds(), ArmedAfterS: r.armed.Seconds(), Armed: r.armedN, Errors: r.errors})
	}
	for _, r := range lags {
		out.Lag = append(out.Lag, jsonLag{N: r.intake.n, SpreadS: o.spread.Seconds(), WholeSeconds: o.wholeSeconds,
			BudgetS: r.budget.Seconds(), ArmedBeforeDue: r.armedBeforeDue,
			FireP50MS: msf(r.fire.P50), FireP99MS: msf(r.fire.P99), FireMaxMS: msf(r.fire.Max),
			CallbackP50MS: msf(r.hook.P50), CallbackP99MS: msf(r.hook.P99), CallbackMaxMS: msf(r.hook.Max),
			HeapPerJob: r.heapPerJob, Fires: r.fires, Calls: r.calls, CallSpanS: r.callSpan.Seconds(),
			LastAfterDueS: r.lastAfterDue.Seconds(), DrainCPUS: r.drainCPU.Seconds(),
			LastOutcomeS: r.lastOutcomeAfterDue.Seconds(), Errors: r.intake.errors})
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(o.jsonOut, append(b, '\n'), 0o644)
}
