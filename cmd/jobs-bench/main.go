// Command jobs-bench measures the jobs API (issue 6) of a real cronsheet
// node run in-process on a fresh SQLite store:
//
//   - intake: jobs accepted per second through POST /api/v1/jobs, one job
//     per request from several concurrent clients, and in batches (a JSON
//     array answered item by item);
//   - trigger lag of N pending delayed POST jobs coming due, spread over a
//     window that starts after every job is armed: due instant → fire
//     start (server.WithFireObserver), and due instant → the callback
//     reaching the hook (read from its Idempotency-Key);
//   - memory per pending job: Go heap after GC with all N armed, minus the
//     heap before submitting them, divided by N (SQLite's page cache lives
//     outside the Go heap and is not counted);
//   - with -floor, the HTTP floor (floor.go): the single case's requests
//     to a bare net/http handler that stores nothing;
//   - with -pending N, only issue 12's pending case (pending.go): N jobs
//     parked 1–3 h ahead, a steady due stream's lag while they wait, and
//     a restart re-arming them.
//
// Every job calls back an HTTP server in this process that answers 200.
// The results are printed as Markdown tables for docs/BENCHMARKS.md.
//
// Usage:
//
//	go run ./cmd/jobs-bench [-n 10000,100000] [-batch 500] [-spread 60] [-clients 8]
//	                        [-budget 0] [-single=true] [-floor] [-lag=true] [-patrol-batch 5000] [-whole-seconds]
//	                        [-calls-csv prefix] [-goroutines prefix] [-goroutines-at d] [-cpuprofile file]
//	                        [-drain-cpuprofile file] [-intake-cpuprofile file] [-json file]
//	go run ./cmd/jobs-bench -pending 1000000 [-pending-rate 1000] [-pending-for 30s] [-batch 500] [-clients 8]
//
// -spread 0 makes every job of the lag case due at the same instant;
// -whole-seconds makes every due instant a whole second (N/spread jobs
// due at each). -json also writes the results as JSON (what
// tools/bench-compare reads).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/config"
	"cronsheet/server"
	"cronsheet/task"
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
	// pending, when positive, runs only the pending case with that many
	// parked jobs; pendingRate and pendingFor are its due stream's jobs
	// per second and duration.
	pending     int
	pendingRate int
	pendingFor  time.Duration
}

func main() {
	ns := flag.String("n", "10000,100000", "comma-separated counts of jobs")
	batch := flag.Int("batch", 500, "jobs per request in the batch case (at most 1000)")
	spread := flag.Int("spread", 60, "seconds the due instants of the lag case are spread over (0: all due at one instant)")
	clients := flag.Int("clients", 8, "concurrent HTTP clients submitting jobs")
	budget := flag.Duration("budget", 0, "time from the start of submission to the first due instant (0: 15s + 1.5ms per job)")
	single := flag.Bool("single", true, "also measure intake one job per request (a node of its own per count)")
	floor := flag.Bool("floor", false, "also measure the single case's requests against a bare net/http handler that stores nothing (the HTTP floor)")
	lag := flag.Bool("lag", true, "measure batch intake, trigger lag and memory (-lag=false: only -single)")
	patrolBatch := flag.Int("patrol-batch", 5000, "the node's patrol.batch (tasks claimed and armed per query)")
	callsCSV := flag.String("calls-csv", "", "write every callback's due and arrival time to <prefix>-<n>.csv")
	goroutines := flag.String("goroutines", "", "write a goroutine dump halfway through the due window to <prefix>-<n>.txt")
	goroutinesAt := flag.Duration("goroutines-at", 0, "take the -goroutines dump this long after the first due instant (0: half the spread)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	wholeSeconds := flag.Bool("whole-seconds", false, "make every due instant of the lag case a whole second")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	drainProfile := flag.String("drain-cpuprofile", "", "write a CPU profile of the lag case from its first due instant to its last callback to <file>-<n>")
	intakeProfile := flag.String("intake-cpuprofile", "", "write a CPU profile of the lag case's batch submission to <file>-<n>")
	pending := flag.Int("pending", 0, "jobs parked 1-3 h ahead, then a steady due stream and a restart (0: off; when set, only this case runs)")
	pendingRate := flag.Int("pending-rate", 1000, "jobs per second the -pending case's due stream submits")
	pendingFor := flag.Duration("pending-for", 30*time.Second, "how long the -pending case's due stream runs")
	flag.Parse()

	o := options{batch: *batch, spread: time.Duration(*spread) * time.Second, clients: *clients, budget: *budget, single: *single, floor: *floor, lag: *lag,
		patrolBatch: *patrolBatch, callsCSV: *callsCSV, goroutines: *goroutines, goroutinesAt: *goroutinesAt, wholeSeconds: *wholeSeconds, jsonOut: *jsonOut,
		drainProfile: *drainProfile, intakeProfile: *intakeProfile, pending: *pending, pendingRate: *pendingRate, pendingFor: *pendingFor}
	for f := range strings.SplitSeq(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fail(fmt.Errorf("-n: %q is not a positive count", f))
		}
		o.ns = append(o.ns, n)
	}
	if o.batch < 1 || o.batch > 1000 || o.clients < 1 || o.spread < 0 {
		fail(errors.New("-batch must be 1..1000, -clients positive, -spread not negative"))
	}
	if err := checkPending(o); err != nil {
		fail(err)
	}
	if *cpuProfile != "" && (o.drainProfile != "" || o.intakeProfile != "") {
		fail(errors.New("-cpuprofile cannot be used with -drain-cpuprofile or -intake-cpuprofile"))
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	gin.SetMode(gin.ReleaseMode)
	if err := run(o); err != nil {
		pprof.StopCPUProfile()
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "jobs-bench:", err)
	os.Exit(1)
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
			progress("single requests, %d jobs: %.0f jobs/s", n, r.rate())
		}
		if o.floor {
			r, err := floorCase(o, n)
			if err != nil {
				return fmt.Errorf("HTTP floor, %d jobs: %w", n, err)
			}
			intake = append(intake, r)
			progress("HTTP floor, %d jobs: %.0f requests/s", n, r.rate())
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
		progress("batches, %d jobs: %.0f jobs/s; fire lag p99 %s", n, r.intake.rate(), ms(r.fire.p99))
	}

	if o.jsonOut != "" {
		if err := writeJSON(o, intake, lags, nil); err != nil {
			return err
		}
	}
	fmt.Printf("| intake | jobs | clients | jobs/request | accepted/s | submission took | all armed after |\n")
	fmt.Printf("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range intake {
		armed := secs(r.armed)
		switch {
		case r.stored != "":
			armed = r.stored
		case r.armedN < int64(r.n):
			armed = fmt.Sprintf("%s (only %d armed)", secs(r.armed), r.armedN)
		}
		fmt.Printf("| %s | %d | %d | %d | %.0f | %s | %s |\n", r.name, r.n, r.clients, r.perRequest,
			r.rate(), secs(r.took), armed)
	}
	fmt.Printf("\n| pending jobs | due over | fire lag p50 | p99 | max | callback lag p50 | p99 | max | heap/pending job |\n")
	fmt.Printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range lags {
		heap := "n/a"
		if r.heapPerJob != 0 {
			heap = kib(r.heapPerJob)
		}
		fmt.Printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.intake.n, secs(o.spread),
			ms(r.fire.p50), ms(r.fire.p99), ms(r.fire.max), ms(r.hook.p50), ms(r.hook.p99), ms(r.hook.max), heap)
	}
	fmt.Println()
	for _, r := range intake {
		if r.errors > 0 {
			fmt.Printf("- %s, %d jobs: the node logged %d errors (the first ones are on stderr).\n", r.name, r.n, r.errors)
		}
	}
	for _, r := range lags {
		fmt.Printf("- %d jobs: first due %s after submission began; %d armed by then, the latest arm %s after submission began",
			r.intake.n, secs(r.budget), r.armedBeforeDue, secs(r.intake.armed))
		fmt.Printf("; %d fires observed; %d callbacks over %d TCP connections to the hook, arriving over %s (%.0f/s); "+
			"%d of %d sampled jobs read done through GET /api/v1/jobs/:id.\n", r.fires, r.calls, r.conns,
			secs(r.callSpan), float64(r.calls)/r.callSpan.Seconds(), r.sampledDone, r.sampled)
	}
	return nil
}

// progress reports on stderr, so that stdout stays the tables.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

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
	fire, hook dist
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
	// final (server.WithRunObserver).
	lastOutcomeAfterDue time.Duration
	// drainCPU is the CPU time (user + system) the process used from the
	// first due instant until every callback arrived (or the wait ended).
	drainCPU time.Duration
}

// postSingles posts n jobs due in an hour, each calling back hookURL, one
// per request from o.clients clients to base's jobs API, and returns the
// time from the first request to the last answer.
func postSingles(o options, base, hookURL string, n int) (time.Duration, error) {
	c := newClient(o.clients)
	due := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	start := time.Now()
	err := parallel(n, o.clients, func(i int) error {
		body := fmt.Appendf(nil, `{"method":"POST","name":%q,"params":"{\"i\":%d}","at":%q}`, hookURL, i, due)
		var v struct {
			ID string `json:"id"`
		}
		if err := c.do(http.MethodPost, base+"/api/v1/jobs", body, http.StatusCreated, &v); err != nil {
			return err
		}
		if v.ID == "" {
			return errors.New("created job has no id")
		}
		return nil
	})
	return time.Since(start), err
}

// singleCase submits n jobs one per request from o.clients clients to a
// node of its own. The jobs are due in an hour, so none fires meanwhile:
// they wait in the store, held by no node, until an arm window before
// their instant (as asynq's scheduled jobs wait in Redis), so the case
// measures intake alone; how soon an edit is armed is measured by
// cmd/cronsheet-bench (edit-to-armed).
func singleCase(o options, n int) (intakeResult, error) {
	var armed arms
	h, err := startHook(0, nil)
	if err != nil {
		return intakeResult{}, err
	}
	defer h.close()
	nd, err := startNode(o, server.WithArmObserver(armed.observe))
	if err != nil {
		return intakeResult{}, err
	}
	defer nd.close()
	start := time.Now() // the arms are timed from here
	took, err := postSingles(o, nd.base, h.url, n)
	if err != nil {
		return intakeResult{}, err
	}
	r := intakeResult{name: "one job per request", n: n, clients: o.clients, perRequest: 1,
		took: took, armedN: armed.n.Load(), errors: nd.errors.Load()}
	if r.armedN == 0 {
		r.stored = "not armed: due in 1 h, each waits in the store until 2 min before"
	} else {
		// A node whose arm window is off (or longer than an hour) arms
		// them as they come: wait for that as the batch case does. A job
		// still unarmed when the count has not moved for a minute (or
		// after five) is reported, not waited for.
		waitCount(armed.n.Load, int64(n), time.Now().Add(5*time.Minute), time.Minute)
		r.armed, r.armedN = armed.since(start), armed.n.Load()
	}
	return r, nil
}

// lagCase submits n delayed POST jobs in batches, their due instants spread
// evenly over o.spread from a start the whole submission and arming should
// fit before; it waits until all are armed, measures the heap, then records
// every fire and callback.
func lagCase(o options, n int) (lagResult, error) {
	// Everything that grows with n is allocated before the heap is first
	// measured, so it does not count as the node's memory.
	fires := &recorder{d: make([]time.Duration, 0, n)}
	var armed arms
	h, err := startHook(n, nil)
	if err != nil {
		return lagResult{}, err
	}
	defer h.close()
	var finals, lastFinal atomic.Int64 // runs stored final; unix ns of the latest
	nd, err := startNode(o,
		server.WithFireObserver(func(_ time.Time, lag time.Duration) { fires.add(lag) }),
		server.WithArmObserver(armed.observe),
		server.WithRunObserver(func(r task.Run) {
			if r.State.Final() {
				lastFinal.Store(time.Now().UnixNano())
				finals.Add(1)
			}
		}),
	)
	if err != nil {
		return lagResult{}, err
	}
	defer nd.close()
	c := newClient(o.clients)
	sample := make([]string, 0, (n+o.batch-1)/o.batch)
	var sampleMu sync.Mutex
	heapBefore := heapBytes()

	budget := o.budget
	if budget <= 0 {
		budget = 15*time.Second + time.Duration(n)*3*time.Millisecond/2
	}
	first := time.Now().Add(budget)
	if o.wholeSeconds {
		first = first.Truncate(time.Second).Add(time.Second)
	}
	bodies := batchBodies(h.url, n, o.batch, first, o.spread, o.wholeSeconds)
	stopIntakeProfile, err := startProfile(o.intakeProfile, n)
	if err != nil {
		return lagResult{}, err
	}
	start := time.Now()
	err = parallel(len(bodies), o.clients, func(i int) error {
		ids, err := submitBatch(c, nd.base, bodies[i])
		if err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
		sampleMu.Lock()
		sample = append(sample, ids[0])
		sampleMu.Unlock()
		return nil
	})
	took := time.Since(start)
	stopIntakeProfile()
	bodies = nil // garbage before the heap is measured again
	if err != nil {
		return lagResult{}, err
	}
	// The heap is measured at least a second before the first due
	// instant, once every job is armed (or as many as are by then).
	waitCount(armed.n.Load, int64(n), first.Add(-time.Second), 0)
	r := lagResult{intake: intakeResult{name: fmt.Sprintf("batches of %d", o.batch), n: n, clients: o.clients,
		perRequest: o.batch, took: took, armed: armed.since(start), armedN: armed.n.Load()}, budget: budget}
	if r.intake.armedN > 0 {
		r.heapPerJob = float64(int64(heapBytes())-int64(heapBefore)) / float64(r.intake.armedN)
	}
	progress("batches, %d jobs: submitted in %s, %d armed after %s, first due in %s", n, secs(took),
		r.intake.armedN, secs(r.intake.armed), secs(time.Until(first)))
	time.Sleep(time.Until(first))
	r.armedBeforeDue = armed.n.Load()
	cpuAtDue := cpuTime()
	stopProfile, err := startProfile(o.drainProfile, n)
	if err != nil {
		return lagResult{}, err
	}

	// Every job should be called back soon after the end of the window; a
	// job not called back when callbacks have stopped for 30 s (or five
	// minutes after the window) is reported, not waited for.
	last := first.Add(o.spread)
	if o.goroutines != "" {
		at := o.spread / 2
		if o.goroutinesAt > 0 {
			at = o.goroutinesAt
		}
		time.Sleep(time.Until(first.Add(at)))
		if err := dumpGoroutines(fmt.Sprintf("%s-%d.txt", o.goroutines, n)); err != nil {
			return lagResult{}, err
		}
	}
	time.Sleep(time.Until(last))
	if !waitCount(h.calls.Load, int64(n), last.Add(5*time.Minute), 30*time.Second) {
		progress("batches, %d jobs: only %d called back", n, h.calls.Load())
	}
	r.drainCPU = cpuTime() - cpuAtDue
	stopProfile()
	progress("batches, %d jobs: the process used %s of CPU from the first due instant to the last callback (%s)",
		n, secs(r.drainCPU), secs(time.Since(first)))
	if !waitCount(finals.Load, int64(n), time.Now().Add(5*time.Minute), 30*time.Second) {
		progress("batches, %d jobs: only %d outcomes stored", n, finals.Load())
	}
	r.lastOutcomeAfterDue = time.Unix(0, lastFinal.Load()).Sub(first)
	progress("batches, %d jobs: the last outcome was stored %s after the first due instant (%.0f jobs/s)",
		n, secs(r.lastOutcomeAfterDue), float64(finals.Load())/r.lastOutcomeAfterDue.Seconds())
	for _, id := range sample {
		var v struct {
			State string `json:"state"`
		}
		if err := c.do(http.MethodGet, nd.base+"/api/v1/jobs/"+id, nil, http.StatusOK, &v); err != nil {
			return lagResult{}, err
		}
		r.sampled++
		if v.State == "done" {
			r.sampledDone++
		}
	}
	if b := h.bad.Load(); b > 0 {
		return lagResult{}, fmt.Errorf("%d callbacks had no readable Idempotency-Key", b)
	}
	cs := h.received()
	r.fire, r.hook = fires.dist(), distribution(callbackLags(cs))
	if o.callsCSV != "" {
		if err := writeCalls(fmt.Sprintf("%s-%d.csv", o.callsCSV, n), cs, first); err != nil {
			return lagResult{}, err
		}
	}
	r.fires, r.calls, r.conns = fires.len(), h.calls.Load(), h.conns.Load()
	r.callSpan = time.Duration(h.last.Load() - h.first.Load())
	r.lastAfterDue = time.Unix(0, h.last.Load()).Sub(first)
	r.intake.errors = nd.errors.Load()
	return r, nil
}

// batchBodies encodes n POST jobs to url in batches of size: job i is due
// at first + spread·i/n (millisecond precision, as due_at keeps it; whole
// seconds when whole, first being one).
func batchBodies(url string, n, size int, first time.Time, spread time.Duration, whole bool) [][]byte {
	due := func(i int) time.Time {
		d := first.Add(spread * time.Duration(i) / time.Duration(n)).Truncate(time.Millisecond)
		if whole {
			d = d.Truncate(time.Second)
		}
		return d
	}
	var out [][]byte
	for lo := 0; lo < n; lo += size {
		out = append(out, jobsBody(url, lo, min(lo+size, n), due))
	}
	return out
}

// jobsBody encodes jobs lo..hi-1 as one batch: POST jobs to url, job i due
// at due(i) (which should be of millisecond precision, as due_at keeps it).
func jobsBody(url string, lo, hi int, due func(i int) time.Time) []byte {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i := lo; i < hi; i++ {
		if i > lo {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"method":"POST","name":%q,"params":"{\"i\":%d}","at":%q}`, url, i, due(i).UTC().Format(time.RFC3339Nano))
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// submitBatch POSTs a batch body to the node at base and returns the ids
// of its jobs, in order; a job of it refused is an error.
func submitBatch(c *client, base string, body []byte) ([]string, error) {
	var items []struct {
		Job *struct {
			ID string `json:"id"`
		} `json:"job"`
		Error string `json:"error"`
	}
	if err := c.do(http.MethodPost, base+"/api/v1/jobs", body, http.StatusOK, &items); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errors.New("the batch was answered with no items")
	}
	ids := make([]string, len(items))
	for i, it := range items {
		if it.Job == nil {
			return nil, fmt.Errorf("job %d of the batch was refused: %s", i, it.Error)
		}
		ids[i] = it.Job.ID
	}
	return ids, nil
}

// node is one in-process cronsheet node on a SQLite file in a temp dir.
type node struct {
	base   string
	dir    string        // the temp dir, which holds the SQLite file (dbFile)
	stop   func() error  // stops the node, keeping its files; idempotent
	close  func()        // stops the node and removes its files; idempotent
	errors *atomic.Int64 // errors it logged
}

// dbFile is the name of a node's SQLite file in its dir.
const dbFile = "bench.db"

// startNode starts a node on a fresh SQLite file in a temp dir of its own
// (startNodeIn).
func startNode(o options, opts ...server.Option) (*node, error) {
	dir, err := os.MkdirTemp("", "jobs-bench-")
	if err != nil {
		return nil, err
	}
	nd, err := startNodeIn(o, dir, opts...)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return nd, nil
}

// startNodeIn starts a node on the SQLite file dbFile in dir (a new one,
// or one a stopped node left), with o's patrol batch, HTTP callbacks to
// loopback allowed, and its log cut to errors, of which the first few are
// printed and the rest counted. Its close removes dir.
func startNodeIn(o options, dir string, opts ...server.Option) (*node, error) {
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.NodeID = "bench"
	cfg.Auth = config.AuthLocalDev // loopback only
	cfg.LogLevel = "warn"
	cfg.Store.Path = filepath.Join(dir, dbFile)
	cfg.Patrol.Lease = time.Minute
	cfg.Patrol.Batch = o.patrolBatch
	cfg.HTTP.Allow = []string{"127.0.0.0/8"}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	errs := new(atomic.Int64)
	logger := slog.New(&countingHandler{Handler: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}), n: errs})
	srv, err := server.New(ctx, cfg, logger, opts...)
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	closeNode := sync.OnceFunc(func() {
		if err := stop(); err != nil {
			progress("node stopped: %v", err)
		}
		os.RemoveAll(dir)
	})
	return &node{base: "http://" + srv.Addr(), dir: dir, stop: stop, close: closeNode, errors: errs}, nil
}

// countingHandler counts the records it is given and passes on the first
// printedErrors of them.
type countingHandler struct {
	slog.Handler
	n *atomic.Int64
}

const printedErrors = 5

func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.n.Add(1) > printedErrors {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithAttrs(as), n: h.n}
}

func (h *countingHandler) WithGroup(name string) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithGroup(name), n: h.n}
}

// hook is the jobs' callback endpoint: it answers 200 to everything and
// records each call's due instant, from its Idempotency-Key (<job id>:<due
// unix ms>:<target>), and when it arrived.
type hook struct {
	url   string
	srv   *http.Server
	mu    sync.Mutex
	seen  []call
	calls atomic.Int64
	first atomic.Int64 // unix nanoseconds of the first call, and of the latest
	last  atomic.Int64
	conns atomic.Int64 // TCP connections accepted
	bad   atomic.Int64 // calls without a readable key
	// onCall, when not nil, is given each call's job id.
	onCall func(jobID string)
}

// startHook listens on a loopback port; expect sizes its record, onCall
// (nil: none) hears each call's job id.
func startHook(expect int, onCall func(jobID string)) (*hook, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hook{url: "http://" + ln.Addr().String() + "/hook", seen: make([]call, 0, expect), onCall: onCall}
	h.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				h.conns.Add(1)
			}
		},
	}
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	_, _ = io.Copy(io.Discard, r.Body)
	key := r.Header.Get("Idempotency-Key")
	if parts := strings.SplitN(key, ":", 3); len(parts) < 2 {
		h.bad.Add(1)
	} else if ms, err := strconv.ParseInt(parts[1], 10, 64); err == nil {
		h.mu.Lock()
		h.seen = append(h.seen, call{due: time.UnixMilli(ms), at: now})
		h.mu.Unlock()
		if h.onCall != nil {
			h.onCall(parts[0])
		}
	} else {
		h.bad.Add(1)
	}
	h.first.CompareAndSwap(0, now.UnixNano())
	h.last.Store(now.UnixNano())
	h.calls.Add(1)
	w.WriteHeader(http.StatusOK)
}

func (h *hook) close() { _ = h.srv.Close() }

// dumpGoroutines writes every goroutine's stack, grouped, to path.
func dumpGoroutines(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("goroutine").WriteTo(f, 1); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// call is one callback: the job's due instant and when the call arrived.
type call struct{ due, at time.Time }

// received returns a copy of the callbacks received so far.
func (h *hook) received() []call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

// callbackLags returns each call's lag: due instant → arrival.
func callbackLags(cs []call) []time.Duration {
	out := make([]time.Duration, len(cs))
	for i, c := range cs {
		out[i] = c.at.Sub(c.due)
	}
	return out
}

// writeCalls writes cs as CSV: due and arrival, in milliseconds after
// first, in due order.
func writeCalls(path string, cs []call, first time.Time) error {
	slices.SortFunc(cs, func(a, b call) int { return a.due.Compare(b.due) })
	var buf bytes.Buffer
	buf.WriteString("due_ms,arrived_ms\n")
	for _, c := range cs {
		fmt.Fprintf(&buf, "%d,%d\n", c.due.Sub(first).Milliseconds(), c.at.Sub(first).Milliseconds())
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// client submits and reads jobs over keep-alive connections, one per
// concurrent client (Go's default keeps only two idle per host, which
// would open a new connection for most requests).
type client struct{ c *http.Client }

func newClient(conns int) *client {
	return &client{c: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, IdleConnTimeout: time.Minute,
	}}}
}

// do sends body (nil: none) and decodes the answer into out, which must
// have status want.
func (c *client) do(method, url string, body []byte, want int, out any) error {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.c.Do(req)
	if err != nil {
		return fmt.Errorf("after %s: %w", time.Since(start).Round(time.Millisecond), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d: %.300s", method, url, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

// arms counts the node's arms and keeps the time of the latest.
type arms struct {
	n    atomic.Int64
	last atomic.Int64 // unix nanoseconds
}

func (a *arms) observe(string) {
	a.last.Store(time.Now().UnixNano())
	a.n.Add(1)
}

// since returns how long after start the latest arm was.
func (a *arms) since(start time.Time) time.Duration {
	return time.Unix(0, a.last.Load()).Sub(start)
}

// recorder collects durations from many goroutines.
type recorder struct {
	mu sync.Mutex
	d  []time.Duration
}

func (r *recorder) add(d time.Duration) {
	r.mu.Lock()
	r.d = append(r.d, d)
	r.mu.Unlock()
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.d)
}

func (r *recorder) dist() dist {
	r.mu.Lock()
	defer r.mu.Unlock()
	return distribution(slices.Clone(r.d))
}

// dist is a distribution's median, 99th percentile and maximum.
type dist struct{ p50, p99, max time.Duration }

func distribution(ds []time.Duration) dist {
	if len(ds) == 0 {
		return dist{}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return dist{p50: at(0.50), p99: at(0.99), max: ds[len(ds)-1]}
}

func ms(d time.Duration) string   { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
func kib(b float64) string        { return fmt.Sprintf("%.2f KiB", b/1024) }

// cpuTime returns the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapBytes returns the live Go heap after a full collection.
func heapBytes() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// waitCount polls count every 5 ms until it reaches want (true), the
// deadline passes, or, with stall > 0, it has not changed for stall.
func waitCount(count func() int64, want int64, deadline time.Time, stall time.Duration) bool {
	last, moved := count(), time.Now()
	for {
		c := count()
		switch now := time.Now(); {
		case c >= want:
			return true
		case now.After(deadline), stall > 0 && now.Sub(moved) > stall:
			return false
		case c != last:
			last, moved = c, now
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// parallel runs f(0..n-1) on workers goroutines; it stops at the first
// error and returns it.
func parallel(n, workers int, f func(i int) error) error {
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					failed.Store(true)
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

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
			FireP50MS: msf(r.fire.p50), FireP99MS: msf(r.fire.p99), FireMaxMS: msf(r.fire.max),
			CallbackP50MS: msf(r.hook.p50), CallbackP99MS: msf(r.hook.p99), CallbackMaxMS: msf(r.hook.max),
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

// startProfile starts a CPU profile into <file>-<n> and returns what stops
// it; without a file it does nothing.
func startProfile(file string, n int) (stop func(), err error) {
	if file == "" {
		return func() {}, nil
	}
	f, err := os.Create(fmt.Sprintf("%s-%d", file, n))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
