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
//   - N jobs due at one instant, for N = -n and each of -instant: lag (due
//     instant → the work starts) p50, p99, max, and the drain rate, N ÷
//     (due instant → the last one done);
//   - N jobs due over -spread seconds (N/spread at each whole second): lag;
//   - memory per pending job;
//   - the SQLite limit probe (probe.go): the same driver writing the least
//     a job needs, -probe-n jobs, and cronsheet's drain at that size;
//   - with -mongo-uri, cronsheet's drain at -n on the mongo driver (for
//     the record: no aim).
//
// It ends with every aim of the drain (docs/BENCHMARKS.md) and its ratio
// in this run.
//
// The workloads are each system's native one and not the same work:
// asynq's job is a no-op handler in its own process; cronsheet's is an
// HTTP callback to a local hook (fire, ledger write, HTTP call, outcome
// recorded). The output says so.
//
// Usage (from tools/bench; make bench-compare does it):
//
//	go run ./cmd/bench-compare [-repo ../..] [-n 10000] [-instant 100000] [-probe-n 20000] [-spread 20]
//	         [-clients 8] [-batch 500] [-concurrency 64] [-check-interval 100ms] [-budget 0] [-mongo-uri URI]
//
// A short run: -n 2000 -instant "" -probe-n 5000 -spread 5.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"cronsheet/tools/bench/internal/benchkit"
)

// options are the command's flags.
type options struct {
	repo          string
	n             int
	instant       []int // sizes due at one instant besides n, on both systems
	probeN        int   // the probe's jobs, and cronsheet's drain at that size (0: no probe)
	mongoURI      string
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
	instant := flag.String("instant", "100000", "comma-separated further sizes due at one instant, on both systems (empty: none)")
	flag.IntVar(&o.probeN, "probe-n", 20000, "jobs of the SQLite limit probe, and of cronsheet's drain beside it (0: no probe)")
	flag.StringVar(&o.mongoURI, "mongo-uri", os.Getenv("CRONSHEET_BENCH_MONGO_URI"),
		"also drain -n jobs due at one instant on the mongo driver at this URI, for the record (default $CRONSHEET_BENCH_MONGO_URI)")
	flag.IntVar(&o.spread, "spread", 20, "seconds the spread workload's due instants cover")
	flag.IntVar(&o.clients, "clients", 8, "concurrent clients submitting jobs")
	flag.IntVar(&o.batch, "batch", 500, "jobs per request in cronsheet's batch intake")
	flag.IntVar(&o.concurrency, "concurrency", 64, "asynq server's Concurrency (handlers at once)")
	flag.DurationVar(&o.checkInterval, "check-interval", 100*time.Millisecond,
		"asynq server's DelayedTaskCheckInterval (its default is 5s)")
	flag.DurationVar(&o.budget, "budget", 0, "time from the start of submission to the first due instant (0: 15s + 0.25ms per job, so that both systems have stored every job before it)")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp dir (Redis AOF, cronsheet results)")
	flag.Parse()
	var err error
	if o.instant, err = sizes(*instant); err != nil {
		fail(err)
	}
	if o.n < 1 || o.probeN < 0 || o.spread < 1 || o.clients < 1 || o.batch < 1 || o.concurrency < 1 {
		fail(errors.New("-n, -spread, -clients, -batch and -concurrency must be positive, -probe-n not negative"))
	}
	if err := run(o); err != nil {
		fail(err)
	}
}

// sizes reads a comma-separated list of positive counts.
func sizes(list string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-instant: %q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// budgetFor is the time from the start of submitting n jobs to their first
// due instant: -budget, or else one that grows with n so that both systems
// have stored (and cronsheet armed) every job before it; a drain that
// starts earlier measures intake and arming too.
func (o options) budgetFor(n int) time.Duration {
	if o.budget > 0 {
		return o.budget
	}
	return 15*time.Second + time.Duration(n)*250*time.Microsecond
}

// instantSizes are the sizes due at one instant that both systems run: n
// first, then -instant's others.
func (o options) instantSizes() []int {
	out := []int{o.n}
	for _, n := range o.instant {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench-compare:", err)
	os.Exit(1)
}

// results are one system's measurements; a zero field was not measured.
type results struct {
	single, batch float64 // accepted/s
	floor         float64 // requests/s to a bare handler that stores nothing (cronsheet's side only)
	instants      []instantResult
	spread        benchkit.Dist
	memPerPending float64 // bytes
	memWhat       string
	notes         []string
	probe         []probeResult // cronsheet's side only
	mongoDrain    float64       // jobs/s at n on the mongo driver (cronsheet's side only)
	mongoErr      string        // why the mongo driver's run gave no drain
}

// instantResult is one workload of n jobs due at one instant.
type instantResult struct {
	n          int
	drain      float64 // jobs/s: n ÷ (due instant → the last one done)
	lag        benchkit.Dist
	lastAfterS float64
}

// instantOf returns the result at size n, and whether there is one.
func (r results) instantOf(n int) (instantResult, bool) {
	for _, in := range r.instants {
		if in.n == n {
			return in, true
		}
	}
	return instantResult{}, false
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
	if o.probeN > 0 {
		if c.probe, err = runProbe(dir, o.probeN); err != nil {
			return err
		}
	}
	printTable(o, a, c, time.Since(start))
	return nil
}
