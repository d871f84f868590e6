package main

import (
	"fmt"
	"time"

	"cronsheet/tools/bench/internal/benchkit"
)

func printTable(o options, a, c results, took time.Duration) {
	fmt.Printf("asynq v0.26.0 (Redis, AOF on) vs cronsheet (SQLite), %d jobs per workload, %d clients, run took %s.\n",
		o.n, o.clients, benchkit.Secs(took))
	fmt.Println("NOT THE SAME WORK: asynq's job is a no-op handler in its own process (lag: due → handler starts);")
	fmt.Println("cronsheet's job is an HTTP callback to a local hook (lag: due → the callback arrives at the hook;")
	fmt.Println("each also writes the fire ledger and records the outcome).")
	fmt.Println()
	fmt.Println("| workload | asynq | cronsheet | cronsheet ÷ asynq |")
	fmt.Println("|---|---:|---:|---:|")
	rate := func(what string, x, y float64) {
		fmt.Printf("| %s | %s | %s | %s |\n", what, perSec(x), perSec(y), ratio(y, x))
	}
	rate(fmt.Sprintf("accepted/s, one job per request (%d clients)", o.clients), a.single, c.single)
	fmt.Printf("| requests/s, one job per request to a bare net/http handler that stores nothing (the floor here) | n/a | %s | |\n", perSec(c.floor))
	fmt.Printf("| accepted/s, batches of %d (%d clients) | n/a (no batch enqueue) | %s | |\n", o.batch, o.clients, perSec(c.batch))
	rate(fmt.Sprintf("drain rate, %d due at one instant (N ÷ due → last done)", o.n), a.drain, c.drain)
	lag := func(what string, x, y benchkit.Dist) {
		fmt.Printf("| lag p50 / p99 / max, %s | %s / %s / %s | %s / %s / %s | %s / %s / %s |\n", what,
			benchkit.MS(x.P50), benchkit.MS(x.P99), benchkit.MS(x.Max), benchkit.MS(y.P50), benchkit.MS(y.P99), benchkit.MS(y.Max),
			ratio(float64(y.P50), float64(x.P50)), ratio(float64(y.P99), float64(x.P99)), ratio(float64(y.Max), float64(x.Max)))
	}
	lag(fmt.Sprintf("%d due at one instant", o.n), a.instant, c.instant)
	lag(fmt.Sprintf("%d due over %d s", o.n, o.spread), a.spread, c.spread)
	fmt.Printf("| memory per pending job | %s (%s) | %s (%s) | %s |\n", benchkit.KiB(a.memPerPending), a.memWhat,
		benchkit.KiB(c.memPerPending), c.memWhat, ratio(c.memPerPending, a.memPerPending))
	fmt.Println()
	for _, n := range append(a.notes, c.notes...) {
		fmt.Println("- " + n)
	}
	fmt.Printf("- cronsheet's memory is the Go heap growth with every job armed (SQLite's page cache and file are not counted); " +
		"asynq's is Redis's used_memory growth with every job scheduled (the client holds nothing).\n")
	fmt.Printf("- Due instants are whole seconds in both (asynq keeps a scheduled job's time in whole seconds).\n")
}

func msDur(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
func perSec(v float64) string       { return fmt.Sprintf("%.0f/s", v) }

func ratio(x, y float64) string {
	if y == 0 || x == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", x/y)
}

// parallel runs f(0..n-1) on workers goroutines; it stops at the first
