// Command bench-compare runs asynq (github.com/hibiken/asynq v0.26.0, on a
// throwaway redis-server it starts with AOF on) and cronsheet (this
// repository's cmd/jobs-bench, built from the parent module and run as a
// subprocess; it starts a real node in-process on a fresh SQLite file) on
// the same workloads, one after the other, and prints one table with both
// and their ratio (issue 12, item 6):
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
// Usage (from this directory; make bench-compare does it):
//
//	go run . [-repo ../..] [-n 10000] [-spread 20] [-clients 8] [-batch 500]
//	         [-concurrency 64] [-check-interval 100ms] [-budget 0]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
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
		// At 100k jobs a 15 s budget ended inside cronsheet's batch intake
		// (~7k/s), and the drain then measured intake and arming too.
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

// progress reports on stderr, so that stdout stays the table.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// results are one system's measurements; a zero field was not measured.
type results struct {
	single, batch     float64 // accepted/s
	floor             float64 // requests/s to a bare handler that stores nothing (cronsheet's side only)
	drain             float64 // jobs/s, one-instant workload
	instant, spread   dist
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
		progress("temp dir %s kept", dir)
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

// ---- asynq ----

// runAsynq starts redis-server and measures asynq's workloads on it.
func runAsynq(o options, dir string) (results, error) {
	settle()
	var r results
	rd, err := startRedis(filepath.Join(dir, "redis"))
	if err != nil {
		return r, err
	}
	defer rd.stop()
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: rd.addr})
	defer rc.Close()
	opt := asynq.RedisClientOpt{Addr: rd.addr}
	client := asynq.NewClient(opt)
	defer client.Close()

	// One job per request, due in an hour; Redis's memory per pending job.
	memBefore, err := usedMemory(ctx, rc)
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	err = parallel(o.n, o.clients, func(i int) error {
		_, err := client.Enqueue(asynq.NewTask("bench", payload(i, time.Time{})), asynq.ProcessIn(time.Hour), asynq.MaxRetry(0))
		return err
	})
	took := time.Since(t0)
	if err != nil {
		return r, fmt.Errorf("enqueue: %w", err)
	}
	r.single = float64(o.n) / took.Seconds()
	memAfter, err := usedMemory(ctx, rc)
	if err != nil {
		return r, err
	}
	r.memPerPending = float64(memAfter-memBefore) / float64(o.n)
	r.memWhat = "Redis used_memory"
	progress("asynq: one job per request: %.0f/s; %.0f B of Redis memory per pending job", r.single, r.memPerPending)
	if err := rc.FlushAll(ctx).Err(); err != nil {
		return r, err
	}

	// N due at one instant, then N spread over o.spread seconds.
	for _, spread := range []int{0, o.spread} {
		d, last, err := asynqLag(o, opt, client, spread)
		if err != nil {
			return r, err
		}
		if spread == 0 {
			r.instant, r.drain, r.instantLastAfterS = d, float64(o.n)/last.Seconds(), last.Seconds()
			progress("asynq: %d due at one instant: lag p99 %s, last done %s after the due instant", o.n, ms(d.p99), secs(last))
		} else {
			r.spread = d
			progress("asynq: %d due over %d s: lag p99 %s", o.n, spread, ms(d.p99))
		}
		if err := rc.FlushAll(ctx).Err(); err != nil {
			return r, err
		}
	}
	r.notes = append(r.notes, fmt.Sprintf("asynq: server Concurrency %d, DelayedTaskCheckInterval %s; Redis with appendonly yes, appendfsync everysec, no RDB snapshots",
		o.concurrency, o.checkInterval))
	return r, nil
}

// payload is job i's payload: its index and due instant (unix ms).
func payload(i int, due time.Time) []byte {
	var ms int64
	if !due.IsZero() {
		ms = due.UnixMilli()
	}
	return fmt.Appendf(nil, `{"i":%d,"due":%d}`, i, ms)
}

// asynqLag enqueues o.n jobs due from a whole second o.budget ahead, over
// spread seconds (0: all at that instant; else N/spread at each whole
// second: asynq keeps a scheduled job's time in whole seconds), runs a
// server with a no-op handler that records when each started, and returns
// the lags (due → handler start) and the first due instant → the last
// handler's end.
func asynqLag(o options, opt asynq.RedisClientOpt, client *asynq.Client, spread int) (dist, time.Duration, error) {
	first := time.Now().Add(o.budget).Truncate(time.Second).Add(time.Second)
	dueOf := func(i int) time.Time {
		return first.Add(time.Duration(spread) * time.Second * time.Duration(i) / time.Duration(o.n)).Truncate(time.Second)
	}
	err := parallel(o.n, o.clients, func(i int) error {
		_, err := client.Enqueue(asynq.NewTask("bench", payload(i, dueOf(i))), asynq.ProcessAt(dueOf(i)), asynq.MaxRetry(0))
		return err
	})
	if err != nil {
		return dist{}, 0, fmt.Errorf("enqueue: %w", err)
	}
	if time.Now().After(first) {
		return dist{}, 0, fmt.Errorf("enqueueing %d jobs took longer than -budget %s", o.n, o.budget)
	}
	lags := make([]time.Duration, 0, o.n)
	var mu sync.Mutex
	var done atomic.Int64
	var last atomic.Int64
	srv := asynq.NewServer(opt, asynq.Config{Concurrency: o.concurrency, DelayedTaskCheckInterval: o.checkInterval,
		LogLevel: asynq.ErrorLevel})
	err = srv.Start(asynq.HandlerFunc(func(_ context.Context, t *asynq.Task) error {
		now := time.Now()
		var p struct {
			Due int64 `json:"due"`
		}
		if err := json.Unmarshal(t.Payload(), &p); err != nil {
			return err
		}
		mu.Lock()
		lags = append(lags, now.Sub(time.UnixMilli(p.Due)))
		mu.Unlock()
		last.Store(time.Now().UnixNano())
		done.Add(1)
		return nil
	}))
	if err != nil {
		return dist{}, 0, err
	}
	defer srv.Shutdown()
	end := first.Add(time.Duration(spread)*time.Second + 5*time.Minute)
	for done.Load() < int64(o.n) {
		if time.Now().After(end) {
			return dist{}, 0, fmt.Errorf("only %d of %d jobs handled 5 min after the last due instant", done.Load(), o.n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	return distribution(lags), time.Unix(0, last.Load()).Sub(first), nil
}

// usedMemory reads Redis's used_memory.
func usedMemory(ctx context.Context, rc *redis.Client) (int64, error) {
	info, err := rc.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("INFO memory has no used_memory")
}

// redisServer is a redis-server process of ours.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

// startRedis starts redis-server on a free loopback port with dir as its
// working directory, AOF on, and waits until it answers.
func startRedis(dir string) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (Debian: apt-get install redis-server): %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--daemonize", "no",
		"--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	rd := &redisServer{addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd}
	rc := redis.NewClient(&redis.Options{Addr: rd.addr})
	defer rc.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if rc.Ping(context.Background()).Err() == nil {
			break
		}
		if time.Now().After(deadline) {
			rd.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer within 10 s (log: %s)", rd.addr, filepath.Join(dir, "redis.log"))
		}
	}
	v, _ := rc.Info(context.Background(), "server").Result()
	for line := range strings.SplitSeq(v, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			progress("redis-server %s on %s (AOF on)", s, rd.addr)
		}
	}
	return rd, nil
}

// stop ends the server (its own process) and waits for it.
func (r *redisServer) stop() {
	if r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ---- cronsheet ----

// benchJSON is what cmd/jobs-bench -json writes.
type benchJSON struct {
	Intake []struct {
		Name       string  `json:"name"`
		PerRequest int     `json:"per_request"`
		AcceptedPS float64 `json:"accepted_per_s"`
		Armed      int64   `json:"armed"`
		N          int     `json:"n"`
		Errors     int64   `json:"errors"`
	} `json:"intake"`
	Lag []struct {
		N              int     `json:"n"`
		SpreadS        float64 `json:"spread_s"`
		ArmedBeforeDue int64   `json:"armed_before_due"`
		FireP99MS      float64 `json:"fire_p99_ms"`
		CallbackP50MS  float64 `json:"callback_p50_ms"`
		CallbackP99MS  float64 `json:"callback_p99_ms"`
		CallbackMaxMS  float64 `json:"callback_max_ms"`
		HeapPerJob     float64 `json:"heap_per_pending_job_bytes"`
		Calls          int64   `json:"calls"`
		LastAfterDueS  float64 `json:"last_callback_after_first_due_s"`
		LastOutcomeS   float64 `json:"last_outcome_after_first_due_s"`
		Errors         int64   `json:"errors"`
	} `json:"lag"`
}

// runCronsheet builds cmd/jobs-bench from o.repo and runs it twice: one
// job per request, batches and N due at one instant; then N spread.
func runCronsheet(o options, dir string) (results, error) {
	var r results
	bin := filepath.Join(dir, "jobs-bench")
	mod := filepath.Join(o.repo, "tools", "bench")
	progress("cronsheet: building %s/cmd/jobs-bench", mod)
	build := exec.Command("go", "build", "-o", bin, "./cmd/jobs-bench")
	build.Dir, build.Stdout, build.Stderr = mod, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return r, fmt.Errorf("go build ./cmd/jobs-bench in %s: %w", mod, err)
	}
	common := []string{"-n", strconv.Itoa(o.n), "-clients", strconv.Itoa(o.clients), "-batch", strconv.Itoa(o.batch),
		"-budget", o.budget.String(), "-whole-seconds"}
	one, err := jobsBench(bin, filepath.Join(dir, "instant.json"), append(common, "-spread", "0", "-single=true", "-floor"))
	if err != nil {
		return r, err
	}
	spread, err := jobsBench(bin, filepath.Join(dir, "spread.json"),
		append(common, "-spread", strconv.Itoa(o.spread), "-single=false"))
	if err != nil {
		return r, err
	}
	for _, in := range one.Intake {
		if strings.HasPrefix(in.Name, "HTTP floor") {
			r.floor = in.AcceptedPS
			continue
		}
		if in.PerRequest == 1 {
			r.single = in.AcceptedPS
		} else {
			r.batch = in.AcceptedPS
		}
	}
	if len(one.Lag) != 1 || len(spread.Lag) != 1 {
		return r, errors.New("jobs-bench gave no lag result")
	}
	l := one.Lag[0]
	r.instant = dist{p50: msDur(l.CallbackP50MS), p99: msDur(l.CallbackP99MS), max: msDur(l.CallbackMaxMS)}
	// Done = the outcome stored (jobs-bench reports it since 120b474;
	// older builds only the last callback).
	last := l.LastAfterDueS
	if l.LastOutcomeS > last {
		last = l.LastOutcomeS
	}
	r.drain = float64(l.Calls) / last
	r.instantLastAfterS = last
	r.memPerPending, r.memWhat = l.HeapPerJob, "Go heap of the node"
	s := spread.Lag[0]
	r.spread = dist{p50: msDur(s.CallbackP50MS), p99: msDur(s.CallbackP99MS), max: msDur(s.CallbackMaxMS)}
	for _, lr := range []struct {
		what string
		l    int64
		arm  int64
		n    int
		err  int64
		fire float64
	}{{"one instant", l.Calls, l.ArmedBeforeDue, l.N, l.Errors, l.FireP99MS}, {"spread", s.Calls, s.ArmedBeforeDue, s.N, s.Errors, s.FireP99MS}} {
		r.notes = append(r.notes, fmt.Sprintf("cronsheet, %s: %d of %d armed before the first due instant, %d called back, fire lag p99 %.1f ms, %d errors logged",
			lr.what, lr.arm, lr.n, lr.l, lr.fire, lr.err))
	}
	return r, nil
}

// settle writes the file system's dirty pages out (sync(2)) before a
// workload starts, so the kernel's write-back of the previous one (Redis's
// AOF, the last run's SQLite file) does not run during it.
func settle() { syscall.Sync() }

// jobsBench runs the jobs-bench binary with args, its output passed to
// stderr, and reads its JSON results.
func jobsBench(bin, out string, args []string) (*benchJSON, error) {
	args = append(args, "-json", out)
	settle()
	progress("cronsheet: jobs-bench %s", strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		fmt.Fprintln(os.Stderr, "    "+sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("jobs-bench %s: %w", strings.Join(args, " "), err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	var r benchJSON
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	return &r, nil
}

// ---- output ----

func printTable(o options, a, c results, took time.Duration) {
	fmt.Printf("asynq v0.26.0 (Redis, AOF on) vs cronsheet (SQLite), %d jobs per workload, %d clients, run took %s.\n",
		o.n, o.clients, secs(took))
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
	lag := func(what string, x, y dist) {
		fmt.Printf("| lag p50 / p99 / max, %s | %s / %s / %s | %s / %s / %s | %s / %s / %s |\n", what,
			ms(x.p50), ms(x.p99), ms(x.max), ms(y.p50), ms(y.p99), ms(y.max),
			ratio(float64(y.p50), float64(x.p50)), ratio(float64(y.p99), float64(x.p99)), ratio(float64(y.max), float64(x.max)))
	}
	lag(fmt.Sprintf("%d due at one instant", o.n), a.instant, c.instant)
	lag(fmt.Sprintf("%d due over %d s", o.n, o.spread), a.spread, c.spread)
	fmt.Printf("| memory per pending job | %s (%s) | %s (%s) | %s |\n", kib(a.memPerPending), a.memWhat,
		kib(c.memPerPending), c.memWhat, ratio(c.memPerPending, a.memPerPending))
	fmt.Println()
	for _, n := range append(a.notes, c.notes...) {
		fmt.Println("- " + n)
	}
	fmt.Printf("- cronsheet's memory is the Go heap growth with every job armed (SQLite's page cache and file are not counted); " +
		"asynq's is Redis's used_memory growth with every job scheduled (the client holds nothing).\n")
	fmt.Printf("- Due instants are whole seconds in both (asynq keeps a scheduled job's time in whole seconds).\n")
}

// ---- helpers ----

// dist is a distribution's median, 99th percentile and maximum.
type dist struct{ p50, p99, max time.Duration }

func distribution(ds []time.Duration) dist {
	if len(ds) == 0 {
		return dist{}
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return dist{p50: at(0.50), p99: at(0.99), max: ds[len(ds)-1]}
}

func msDur(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
func ms(d time.Duration) string     { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
func secs(d time.Duration) string   { return fmt.Sprintf("%.1f s", d.Seconds()) }
func kib(b float64) string          { return fmt.Sprintf("%.2f KiB", b/1024) }
func perSec(v float64) string       { return fmt.Sprintf("%.0f/s", v) }

func ratio(x, y float64) string {
	if y == 0 || x == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", x/y)
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
