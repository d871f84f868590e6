package main

import (
	"fmt"
	"strings"
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
	lag := func(what string, x, y benchkit.Dist) {
		fmt.Printf("| lag p50 / p99 / max, %s | %s / %s / %s | %s / %s / %s | %s / %s / %s |\n", what,
			benchkit.MS(x.P50), benchkit.MS(x.P99), benchkit.MS(x.Max), benchkit.MS(y.P50), benchkit.MS(y.P99), benchkit.MS(y.Max),
			ratio(float64(y.P50), float64(x.P50)), ratio(float64(y.P99), float64(x.P99)), ratio(float64(y.Max), float64(x.Max)))
	}
	for _, ci := range c.instants {
		ai, ok := a.instantOf(ci.n)
		if !ok {
			// The probe's size: cronsheet's drain beside the probe only.
			fmt.Printf("| drain rate, %d due at one instant (cronsheet only, beside the probe) | not run | %s | |\n", ci.n, perSec(ci.drain))
			fmt.Printf("| lag p50 / p99 / max, %d due at one instant | not run | %s / %s / %s | |\n", ci.n,
				benchkit.MS(ci.lag.P50), benchkit.MS(ci.lag.P99), benchkit.MS(ci.lag.Max))
			continue
		}
		rate(fmt.Sprintf("drain rate, %d due at one instant (N ÷ due → last done)", ci.n), ai.drain, ci.drain)
		lag(fmt.Sprintf("%d due at one instant", ci.n), ai.lag, ci.lag)
	}
	lag(fmt.Sprintf("%d due over %d s", o.n, o.spread), a.spread, c.spread)
	fmt.Printf("| memory per pending job | %s (%s) | %s (%s) | %s |\n", benchkit.KiB(a.memPerPending), a.memWhat,
		benchkit.KiB(c.memPerPending), c.memWhat, ratio(c.memPerPending, a.memPerPending))
	if c.mongoDrain > 0 {
		ai, _ := a.instantOf(o.n)
		rate(fmt.Sprintf("drain rate, %d due at one instant, cronsheet on the mongo driver (FerretDB; for the record)", o.n), ai.drain, c.mongoDrain)
	}
	if c.mongoErr != "" {
		why := c.mongoErr
		if len(why) > 300 {
			why = strings.ToValidUTF8(why[:300], "") + "…"
		}
		fmt.Printf("| drain rate, %d due at one instant, cronsheet on the mongo driver (FerretDB; for the record) | | failed: %s | |\n",
			o.n, strings.ReplaceAll(why, "|", "/"))
	}
	fmt.Println()
	printProbe(o, c)
	for _, n := range append(a.notes, c.notes...) {
		fmt.Println("- " + n)
	}
	fmt.Printf("- cronsheet's memory is the Go heap growth with every job armed (SQLite's page cache and file are not counted); " +
		"asynq's is Redis's used_memory growth with every job scheduled (the client holds nothing).\n")
	fmt.Printf("- Due instants are whole seconds in both (asynq keeps a scheduled job's time in whole seconds).\n")
	fmt.Println()
	printAims(o, a, c)
}

// printProbe prints the SQLite limit probe beside cronsheet's drain at
// the probe's size.
func printProbe(o options, c results) {
	if len(c.probe) == 0 {
		return
	}
	ci, _ := c.instantOf(o.probeN)
	fmt.Printf("SQLite limit probe, %d jobs: the same driver (modernc) and settings (WAL, synchronous NORMAL, one connection), "+
		"the least a job writes (a task insert at intake; a run insert at the fire; a run update and a task update at the end), "+
		"%d rows a transaction, no HTTP, no claims, no scheduler.\n\n", o.probeN, probeChunk)
	fmt.Println("| probe tables | runs: B-trees | intake/s | fire + finish/s | cronsheet's drain ÷ this |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, p := range c.probe {
		fmt.Printf("| %s | %d | %s | %s | %s |\n", p.schema, p.runsBTrees, perSec(p.intake), perSec(p.drain), ratio(ci.drain, p.drain))
	}
	fmt.Printf("\n(cronsheet's drain at %d due at one instant: %s.)\n\n", o.probeN, perSec(ci.drain))
}

// aim is one aim of the drain and how this run measured against it.
type aim struct {
	what, measured string
	ratio, want    float64
	atMost         bool // the ratio must be at most want (else at least)
}

// printAims prints every aim with its ratio in this run; an aim whose
// workload did not run says so.
func printAims(o options, a, c results) {
	var aims []aim
	for _, n := range o.instantSizes() {
		ci, _ := c.instantOf(n)
		ai, _ := a.instantOf(n)
		aims = append(aims, aim{what: fmt.Sprintf("drain, %d due at one instant ÷ asynq's", n),
			measured: fmt.Sprintf("%s vs %s", perSec(ci.drain), perSec(ai.drain)), ratio: div(ci.drain, ai.drain), want: 1})
	}
	if len(c.probe) > 0 {
		ci, _ := c.instantOf(o.probeN)
		p := c.probe[0] // the minimal tables: what the file can do
		aims = append(aims, aim{what: fmt.Sprintf("drain, %d due at one instant ÷ the SQLite limit probe (%s tables)", o.probeN, p.schema),
			measured: fmt.Sprintf("%s vs %s", perSec(ci.drain), perSec(p.drain)), ratio: div(ci.drain, p.drain), want: 0.5})
	}
	aims = append(aims,
		aim{what: "one job per request ÷ the bare net/http floor", measured: fmt.Sprintf("%s vs %s", perSec(c.single), perSec(c.floor)),
			ratio: div(c.single, c.floor), want: 0.6},
		aim{what: fmt.Sprintf("batches of %d ÷ 40,000 jobs/s", o.batch), measured: perSec(c.batch), ratio: div(c.batch, 40000), want: 1},
		aim{what: "memory per pending job ÷ asynq's Redis", measured: fmt.Sprintf("%s vs %s", benchkit.KiB(c.memPerPending), benchkit.KiB(a.memPerPending)),
			ratio: div(c.memPerPending, a.memPerPending), want: 1, atMost: true})
	fmt.Println("| aim | measured | ratio | wanted | |")
	fmt.Println("|---|---:|---:|---:|---|")
	for _, x := range aims {
		want, verdict := fmt.Sprintf("≥ %.2f", x.want), "missed"
		if x.atMost {
			want = fmt.Sprintf("≤ %.2f", x.want)
		}
		switch {
		case x.ratio == 0:
			verdict = "not measured"
		case x.atMost && x.ratio <= x.want, !x.atMost && x.ratio >= x.want:
			verdict = "met"
		}
		fmt.Printf("| %s | %s | %.2f | %s | %s |\n", x.what, x.measured, x.ratio, want, verdict)
	}
}

// div is x ÷ y, 0 when either is 0 (not measured).
func div(x, y float64) float64 {
	if x == 0 || y == 0 {
		return 0
	}
	return x / y
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
