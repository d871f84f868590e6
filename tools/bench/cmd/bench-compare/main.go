// Command bench-compare runs asynq (github.com/hibiken/asynq v0.26.0, on a
// throwaway redis-server it starts with AOF on) and cronsheet (this
// module's cmd/jobs-bench, built from the repository's working tree and run
// as a subprocess; it starts a real node in-process on a fresh SQLite file)
// on the same workloads, one after the other, and prints one table with
// both and their ratio:
//
//   - accepted/s, one job per request from -clients concurrent clients
//     (jobs due in an hour, so none runs meanwhile);
//   - accepted/s in batches of -batch (cronsheet only: asynq's client has
//     no batch enqueue);
//   - N jobs due at one instant: lag (due instant → the work starts) p50,
//     p99, max, and the drain rate, N ÷ (due instant → the last one done);
//   - N jobs due over -spread seconds (N/spread at each whole second): lag;
//   - memory per pending job.
//
// The workloads are each system's native one and not the same work:
// asynq's job is a no-op handler in its own process; cronsheet's is an
// HTTP callback to a local hook (fire, ledger write, HTTP call, outcome
// recorded). The output says so.
//
// Usage (from tools/bench; make bench-compare does it):
//
//	go run ./cmd/bench-compare [-repo ../..] [-n 10000] [-spread 20] [-clients 8] [-batch 500]
//	         [-concurrency 64] [-check-interval 100ms] [-budget 0]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"cronsheet/tools/bench/internal/benchkit"
)

// options are the command's flags.
type options struct {
	repo          string
	n             int
	spread        int
	clients       int
	batch         int
	concurrency   int
	checkInterval time.Duration
	budget        time.Duration
	keep          bool
}

func main() {
	var o options
	flag.StringVar(&o.repo, "repo", "../..", "the cronsheet repository (its tools/bench/cmd/jobs-bench is built from there)")
	flag.IntVar(&o.n, "n", 10000, "jobs per workload")
	flag.IntVar(&o.spread, "spread", 20, "seconds the spread workload's due instants cover")
	flag.IntVar(&o.clients, "clients", 8, "concurrent clients submitting jobs")
	flag.IntVar(&o.batch, "batch", 500, "jobs per request in cronsheet's batch intake")
	flag.IntVar(&o.concurrency, "concurrency", 64, "asynq server's Concurrency (handlers at once)")
	flag.DurationVar(&o.checkInterval, "check-interval", 100*time.Millisecond,
		"asynq server's DelayedTaskCheckInterval (its default is 5s)")
	flag.DurationVar(&o.budget, "budget", 0, "time from the start of submission to the first due instant (0: 15s + 0.25ms per job, so that both systems have stored every job before it)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp dir (Redis AOF, cronsheet results)")
	flag.Parse()
	if o.n < 1 || o.spread < 1 || o.clients < 1 || o.batch < 1 || o.concurrency < 1 {
		fail(errors.New("-n, -spread, -clients, -batch and -concurrency must be positive"))
	}
	if o.budget <= 0 {
		// The budget grows with n so that both systems have stored (and
		// cronsheet armed) every job before the first due instant; a drain
		// that starts earlier measures intake and arming too.
		o.budget = 15*time.Second + time.Duration(o.n)*250*time.Microsecond
	}
	if err := run(o); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench-compare:", err)
	os.Exit(1)
}

// results are one system's measurements; a zero field was not measured.
type results struct {
	single, batch     float64 // accepted/s
	floor             float64 // requests/s to a bare handler that stores nothing (cronsheet's side only)
	drain             float64 // jobs/s, one-instant workload
	instant, spread   benchkit.Dist
	memPerPending     float64 // bytes
	memWhat           string
	notes             []string
	instantLastAfterS float64
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "bench-compare-")
	if err != nil {
		return err
	}
	if o.keep {
		benchkit.Progress("temp dir %s kept", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	start := time.Now()
	a, err := runAsynq(o, dir)
	if err != nil {
		return fmt.Errorf("asynq: %w", err)
	}
	c, err := runCronsheet(o, dir)
	if err != nil {
		return fmt.Errorf("cronsheet: %w", err)
	}
	printTable(o, a, c, time.Since(start))
	return nil
}
