package main

import (
	"fmt"
	"time"

	"cronsheet/tools/bench/internal/benchkit"
)

// intakeResult is one intake measurement.
type intakeResult struct {
	name       string
	n          int
	clients    int
	perRequest int
	took       time.Duration // first request sent → last answer read
	armed      time.Duration // first request sent → the latest arm
	armedN     int64         // jobs armed when the wait ended
	// stored, when set, says why the jobs are not armed at all: they wait
	// in the store, and armed and armedN mean nothing.
	stored string
	errors int64 // errors the node logged
}

func (r intakeResult) rate() float64 { return float64(r.n) / r.took.Seconds() }

// lagResult is one lag measurement, with the batch intake that fed it.
type lagResult struct {
	intake     intakeResult
	budget     time.Duration // submission start → first due instant
	fire, hook benchkit.Dist
	heapPerJob float64 // heap growth ÷ jobs armed when it was measured
	// armedBeforeDue counts the jobs armed before the first due instant.
	armedBeforeDue int64
	fires          int           // fires the observer saw
	calls          int64         // callbacks the hook received
	callSpan       time.Duration // first callback → last
	conns          int64         // TCP connections the hook accepted
	sampled        int
	sampledDone    int
	// lastAfterDue is the first due instant → the last callback.
	lastAfterDue time.Duration
	// lastOutcomeAfterDue is the first due instant → the last run stored
	// final (the node's run observer).
	lastOutcomeAfterDue time.Duration
	// drainCPU is the CPU time (user + system) the process used from the
	// first due instant until every callback arrived (or the wait ended).
	drainCPU time.Duration
}

// printResults prints the intake and lag tables, and the notes under
// them.
func printResults(o options, intake []intakeResult, lags []lagResult) {
	fmt.Printf("| intake | jobs | clients | jobs/request | accepted/s | submission took | all armed after |\n")
	fmt.Printf("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range intake {
		armed := benchkit.Secs(r.armed)
		switch {
		case r.stored != "":
			armed = r.stored
		case r.armedN < int64(r.n):
			armed = fmt.Sprintf("%s (only %d armed)", benchkit.Secs(r.armed), r.armedN)
		}
		fmt.Printf("| %s | %d | %d | %d | %.0f | %s | %s |\n", r.name, r.n, r.clients, r.perRequest,
			r.rate(), benchkit.Secs(r.took), armed)
	}
	fmt.Printf("\n| pending jobs | due over | fire lag p50 | p99 | max | callback lag p50 | p99 | max | heap/pending job |\n")
	fmt.Printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range lags {
		heap := "n/a"
		if r.heapPerJob != 0 {
			heap = benchkit.KiB(r.heapPerJob)
		}
		fmt.Printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.intake.n, benchkit.Secs(o.spread),
			benchkit.MS(r.fire.P50), benchkit.MS(r.fire.P99), benchkit.MS(r.fire.Max), benchkit.MS(r.hook.P50), benchkit.MS(r.hook.P99), benchkit.MS(r.hook.Max), heap)
	}
	fmt.Println()
	for _, r := range intake {
		if r.errors > 0 {
			fmt.Printf("- %s, %d jobs: the node logged %d errors (the first ones are on stderr).\n", r.name, r.n, r.errors)
		}
	}
	for _, r := range lags {
		fmt.Printf("- %d jobs: first due %s after submission began; %d armed by then, the latest arm %s after submission began",
			r.intake.n, benchkit.Secs(r.budget), r.armedBeforeDue, benchkit.Secs(r.intake.armed))
		fmt.Printf("; %d fires observed; %d callbacks over %d TCP connections to the hook, arriving over %s (%.0f/s); "+
			"%d of %d sampled jobs read done through GET /api/v1/jobs/:id.\n", r.fires, r.calls, r.conns,
			benchkit.Secs(r.callSpan), float64(r.calls)/r.callSpan.Seconds(), r.sampledDone, r.sampled)
	}
}
