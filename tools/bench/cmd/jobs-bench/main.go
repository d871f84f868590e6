// Command jobs-bench measures the jobs API of a real cronsheet node run
// in-process on a fresh SQLite store (with -mongo-uri, a fresh database on
// the mongo driver):
//
//   - intake: jobs accepted per second through POST /api/v1/jobs, one job
//     per request from several concurrent clients, and in batches (a JSON
//     array answered item by item);
//   - trigger lag of N pending delayed POST jobs coming due, spread over a
//     window that starts after every job is armed: due instant → fire
//     start (the node's fire observer), and due instant → the callback
//     reaching the hook (read from its Idempotency-Key);
//   - memory per pending job: Go heap after GC with all N armed, minus the
//     heap before submitting them, divided by N (SQLite's page cache lives
//     outside the Go heap and is not counted);
//   - with -floor, the HTTP floor (floor.go): the single case's requests
//     to a bare net/http handler that stores nothing;
//   - with -pending N, only the pending case (pending.go): N jobs parked
//     1–3 h ahead, a steady due stream's lag while they wait, and a
//     restart re-arming them.
//
// Every job calls back an HTTP server in this process that answers 200.
// The results are printed as Markdown tables for docs/BENCHMARKS.md.
//
// Usage (from tools/bench; make bench-jobs runs the defaults):
//
//	go run ./cmd/jobs-bench [-n 10000,100000] [-batch 500] [-spread 60] [-clients 8]
//	                        [-budget 0] [-single=true] [-floor] [-lag=true] [-patrol-batch 5000] [-whole-seconds]
//	                        [-calls-csv prefix] [-goroutines prefix] [-goroutines-at d] [-cpuprofile file]
//	                        [-drain-cpuprofile file] [-intake-cpuprofile file] [-blockprofile prefix] [-json file] [-mongo-uri URI]
//	go run ./cmd/jobs-bench -pending 1000000 [-pending-rate 1000] [-pending-for 30s] [-batch 500] [-clients 8]
//
// -spread 0 makes every job of the lag case due at the same instant;
// -whole-seconds makes every due instant a whole second (N/spread jobs
// due at each). -json also writes the results as JSON (what
// cmd/bench-compare reads).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/tools/bench/internal/benchkit"
)

// options are the command's flags.
type options struct {
	ns      []int
	batch   int
	spread  time.Duration
	clients int
	budget  time.Duration
	single  bool
	// floor also measures the single case against a bare HTTP handler
	// that stores nothing (floor.go).
	floor bool
	lag   bool // the batch intake and lag case
	// wholeSeconds rounds every due instant of the lag case to a whole
	// second.
	wholeSeconds bool
	// patrolBatch is the node's patrol.batch: tasks claimed per query.
	patrolBatch int
	// mongoURI, when set, puts each node's store on the mongo driver at
	// this URI (a database of its own, dropped afterwards).
	mongoURI string
	// callsCSV, when set, is the prefix of files that get every callback
	// of the lag case (<prefix>-<n>.csv).
	callsCSV string
	// goroutines, when set, is the prefix of files that get a goroutine
	// dump halfway through the lag case's window (<prefix>-<n>.txt), or
	// goroutinesAt after its first due instant.
	goroutines string
	// goroutinesAt, when positive, is when after the first due instant the
	// goroutine dump is taken (default: half the spread).
	goroutinesAt time.Duration
	// jsonOut, when set, is the file that gets the results as JSON.
	jsonOut string
	// drainProfile, when set, is the file that gets a CPU profile of the
	// lag case from its first due instant until every callback arrived
	// (<file>-<n>); -cpuprofile cannot be used with it.
	drainProfile string
	// intakeProfile, when set, is the file that gets a CPU profile of the
	// lag case's batch submission (<file>-<n>); -cpuprofile cannot be used
	// with it.
	intakeProfile string
	// heapProfile, when set, is the file (<file>-<n>) that gets the lag
	// case's live heap once its jobs are armed, next to the heap-per-job
	// figure: what the armed jobs hold.
	heapProfile string
	// blockProfile, when set, is the prefix of the files that get the
	// whole run's block and mutex profiles (<prefix>.block, <prefix>.mutex).
	blockProfile string
	// pending, when positive, runs only the pending case with that many
	// parked jobs; pendingRate and pendingFor are its due stream's jobs
	// per second and duration.
	pending     int
	pendingRate int
	pendingFor  time.Duration
}

func main() {
	o, cpuProfile, err := parseFlags()
	if err != nil {
		fail(err)
	}
	stopProfile, err := benchkit.StartCPUProfile(cpuProfile)
	if err != nil {
		fail(err)
	}
	defer stopProfile()
	stopBlock, err := benchkit.StartBlockProfile(o.blockProfile)
	if err != nil {
		fail(err)
	}
	defer stopBlock()
	gin.SetMode(gin.ReleaseMode)
	if err := run(o); err != nil {
		stopProfile()
		stopBlock()
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "jobs-bench:", err)
	os.Exit(1)
}

// parseFlags reads the command line into options, and the whole run's
// -cpuprofile file.
func parseFlags() (o options, cpuProfile string, err error) {
	ns := flag.String("n", "10000,100000", "comma-separated counts of jobs")
	spread := flag.Int("spread", 60, "seconds the due instants of the lag case are spread over (0: all due at one instant)")
	flag.IntVar(&o.batch, "batch", 500, "jobs per request in the batch case (at most 1000)")
	flag.IntVar(&o.clients, "clients", 8, "concurrent HTTP clients submitting jobs")
	flag.DurationVar(&o.budget, "budget", 0, "time from the start of submission to the first due instant (0: 15s + 1.5ms per job)")
	flag.BoolVar(&o.single, "single", true, "also measure intake one job per request (a node of its own per count)")
	flag.BoolVar(&o.floor, "floor", false, "also measure the single case's requests against a bare net/http handler that stores nothing (the HTTP floor)")
	flag.BoolVar(&o.lag, "lag", true, "measure batch intake, trigger lag and memory (-lag=false: only -single)")
	flag.IntVar(&o.patrolBatch, "patrol-batch", 5000, "the node's patrol.batch (tasks claimed and armed per query)")
	flag.StringVar(&o.mongoURI, "mongo-uri", "", "run the nodes on the mongo driver at this URI (a new database each, dropped after) instead of SQLite")
	flag.StringVar(&o.callsCSV, "calls-csv", "", "write every callback's due and arrival time to <prefix>-<n>.csv")
	flag.StringVar(&o.goroutines, "goroutines", "", "write a goroutine dump halfway through the due window to <prefix>-<n>.txt")
	flag.DurationVar(&o.goroutinesAt, "goroutines-at", 0, "take the -goroutines dump this long after the first due instant (0: half the spread)")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.BoolVar(&o.wholeSeconds, "whole-seconds", false, "make every due instant of the lag case a whole second")
	flag.StringVar(&o.jsonOut, "json", "", "also write the results as JSON to this file")
	flag.StringVar(&o.drainProfile, "drain-cpuprofile", "", "write a CPU profile of the lag case from its first due instant to its last callback to <file>-<n>")
	flag.StringVar(&o.heapProfile, "heapprofile", "", "write the lag case's heap profile, taken where memory per pending job is measured, to <file>-<n>")
	flag.StringVar(&o.blockProfile, "blockprofile", "", "write the whole run's block and mutex profiles to <prefix>.block and <prefix>.mutex")
	flag.StringVar(&o.intakeProfile, "intake-cpuprofile", "", "write a CPU profile of the lag case's batch submission to <file>-<n>")
	flag.IntVar(&o.pending, "pending", 0, "jobs parked 1-3 h ahead, then a steady due stream and a restart (0: off; when set, only this case runs)")
	flag.IntVar(&o.pendingRate, "pending-rate", 1000, "jobs per second the -pending case's due stream submits")
	flag.DurationVar(&o.pendingFor, "pending-for", 30*time.Second, "how long the -pending case's due stream runs")
	flag.Parse()

	o.spread = time.Duration(*spread) * time.Second
	for f := range strings.SplitSeq(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return o, "", fmt.Errorf("-n: %q is not a positive count", f)
		}
		o.ns = append(o.ns, n)
	}
	if o.batch < 1 || o.batch > 1000 || o.clients < 1 || o.spread < 0 {
		return o, "", errors.New("-batch must be 1..1000, -clients positive, -spread not negative")
	}
	if err := checkPending(o); err != nil {
		return o, "", err
	}
	if o.pending > 0 && o.mongoURI != "" {
		// The restart opens the stopped node's store again; a mongo node's
		// database is its own and dropped at stop.
		return o, "", errors.New("-mongo-uri cannot be used with -pending")
	}
	if cpuProfile != "" && (o.drainProfile != "" || o.intakeProfile != "") {
		return o, "", errors.New("-cpuprofile cannot be used with -drain-cpuprofile or -intake-cpuprofile")
	}
	return o, cpuProfile, nil
}

// run measures every count and prints the two tables (with -pending, only
// the pending case and its table).
func run(o options) error {
	if o.pending > 0 {
		return runPending(o)
	}
	var intake []intakeResult
	var lags []lagResult
	for _, n := range o.ns {
		if o.single {
			r, err := singleCase(o, n)
			if err != nil {
				return fmt.Errorf("single requests, %d jobs: %w", n, err)
			}
			intake = append(intake, r)
			benchkit.Progress("single requests, %d jobs: %.0f jobs/s", n, r.rate())
		}
		if o.floor {
			r, err := floorCase(o, n)
			if err != nil {
				return fmt.Errorf("HTTP floor, %d jobs: %w", n, err)
			}
			intake = append(intake, r)
			benchkit.Progress("HTTP floor, %d jobs: %.0f requests/s", n, r.rate())
		}
		if !o.lag {
			continue
		}
		r, err := lagCase(o, n)
		if err != nil {
			return fmt.Errorf("batches, %d jobs: %w", n, err)
		}
		intake = append(intake, r.intake)
		lags = append(lags, r)
		benchkit.Progress("batches, %d jobs: %.0f jobs/s; fire lag p99 %s", n, r.intake.rate(), benchkit.MS(r.fire.P99))
	}
	if o.jsonOut != "" {
		if err := writeJSON(o, intake, lags, nil); err != nil {
			return err
		}
	}
	printResults(o, intake, lags)
	return nil
}
