package main

import (
	"encoding/json"
	"os"
	"time"

	"cronsheet/tools/bench/internal/jobsjson"
)

// writeJSON writes the results to o.jsonOut; pending, when not nil, is
// the pending case's.
func writeJSON(o options, intake []intakeResult, lags []lagResult, pending *pendingResult) error {
	msf := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var out jobsjson.Results
	if pending != nil {
		p := pending.json()
		out.Pending = &p
	}
	for _, r := range intake {
		out.Intake = append(out.Intake, jobsjson.Intake{Name: r.name, N: r.n, Clients: r.clients, PerRequest: r.perRequest,
			AcceptedPS: r.rate(), TookS: r.took.Seconds(), ArmedAfterS: r.armed.Seconds(), Armed: r.armedN, Errors: r.errors})
	}
	for _, r := range lags {
		out.Lag = append(out.Lag, jobsjson.Lag{N: r.intake.n, SpreadS: o.spread.Seconds(), WholeSeconds: o.wholeSeconds,
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
