// Command cronsheet-bench measures a real cronsheet node in-process on a
// fresh SQLite store: trigger lag (scheduled instant → fire start, and →
// ledger record) for N armed tasks, spread over seconds or all due in the
// same second; edit-to-armed time (API POST → armed in gocron); and heap
// memory per armed task. It prints a Markdown table for docs/BENCHMARKS.md.
//
// Usage:
//
//	go run ./cmd/cronsheet-bench [-n 1000,10000] [-spread 60] [-edits 200]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
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
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/config"
	"cronsheet/server"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

func main() {
	ns := flag.String("n", "1000,10000", "comma-separated task counts")
	spread := flag.Int("spread", 60, "seconds the spread case spreads its tasks over (0: skip that case)")
	edits := flag.Int("edits", 200, "rows created one by one for edit-to-armed")
	park := flag.Int("park", 0, "tasks due in an hour, armed with the arming window on (parked) and off, for heap per armed task (0: skip)")
	restart := flag.Int("restart", 0, "tasks due in an hour; stop the node and time a new node re-arming them all (0: skip)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "cronsheet-bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	gin.SetMode(gin.ReleaseMode)
	if *restart > 0 {
		if err := restartCase(*restart); err != nil {
			fmt.Fprintln(os.Stderr, "cronsheet-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *park > 0 {
		if err := parkCases(*park); err != nil {
			fmt.Fprintln(os.Stderr, "cronsheet-bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*ns, *spread, *edits); err != nil {
		fmt.Fprintln(os.Stderr, "cronsheet-bench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(ns string, spread, edits int) error {
	fmt.Printf("| case | tasks | fire lag p50 | p99 | max | ledger lag p50 | p99 | max | heap/armed task | created+armed/s |\n")
	fmt.Printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range strings.Split(ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-n: %w", err)
		}
		for _, sp := range []int{spread, 1} {
			if sp == 0 {
				continue // -spread 0: only the same-second case
			}
			name := fmt.Sprintf("spread over %ds", sp)
			if sp == 1 {
				name = "all due in the same second"
			}
			r, err := lagCase(n, sp)
			if err != nil {
				fmt.Printf("| %s | %d | failed: %v |\n", name, n, err)
				continue
			}
			fmt.Printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %.0f |\n", name, n,
				ms(r.fire.p50), ms(r.fire.p99), ms(r.fire.max),
				ms(r.ledger.p50), ms(r.ledger.p99), ms(r.ledger.max), kib(r.heapPerTask), r.armRate)
		}
	}
	d, err := editCase(edits)
	if err != nil {
		return fmt.Errorf("edit-to-armed: %w", err)
	}
	fmt.Printf("\n| edit-to-armed (%d rows, one at a time) | p50 | p99 | max |\n|---|---:|---:|---:|\n| POST row → armed | %s | %s | %s |\n",
		edits, ms(d.p50), ms(d.p99), ms(d.max))
	return nil
}

type dist struct{ p50, p99, max time.Duration }

func distribution(ds []time.Duration) dist {
	if len(ds) == 0 {
		return dist{}
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return dist{p50: at(0.50), p99: at(0.99), max: ds[len(ds)-1]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
func kib(b float64) string      { return fmt.Sprintf("%.2f KiB", b/1024) }
func quiet() *slog.Logger       { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
func postJSON(url string, v any) (*http.Response, error) {
	raw, _ := json.Marshal(v)
	return http.Post(url, "application/json", bytes.NewReader(raw))
}

// node is one in-process cronsheet.
type node struct {
	srv    *server.Server
	base   string
	dbPath string
	dir    string
	stop   func() error // idempotent
}

// startNode starts a node on a fresh SQLite store; tune, when not nil,
// changes its configuration first.
func startNode(tune func(*config.Config), opts ...server.Option) (*node, error) {
	dir, err := os.MkdirTemp("", "cronsheet-bench-")
	if err != nil {
		return nil, err
	}
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.NodeID = "bench"
	cfg.Auth = config.AuthLocalDev // loopback only
	cfg.LogLevel = "warn"
	cfg.Store.Path = filepath.Join(dir, "bench.db")
	cfg.Patrol.Lease = time.Minute
	if tune != nil {
		tune(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, cfg, quiet(), opts...)
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
	return &node{srv: srv, base: "http://" + srv.Addr(), dbPath: cfg.Store.Path, stop: stop, dir: dir}, nil
}

type lagResult struct {
	fire, ledger dist
	heapPerTask  float64
	armRate      float64 // rows created through the API and armed, per second
}

// lagCase arms n one-time tasks due over `spread` seconds starting a little
// after they are all armed, and records each fire's lag.
func lagCase(n, spread int) (lagResult, error) {
	var mu sync.Mutex
	lags := make([]time.Duration, 0, n)
	var armed atomic.Int64
	nd, err := startNode(nil,
		server.WithFireObserver(func(_ time.Time, lag time.Duration) { mu.Lock(); lags = append(lags, lag); mu.Unlock() }),
		server.WithArmObserver(func(string) { armed.Add(1) }),
	)
	if err != nil {
		return lagResult{}, err
	}
	defer os.RemoveAll(nd.dir)
	defer nd.stop()
	heapBefore := heap()
	// Rows are created through the API; the first slot leaves time to arm all.
	base := time.Now().Add(time.Duration(10+n/200) * time.Second).Truncate(time.Second)
	created := time.Now()
	ids := make([]string, n)
	if err := parallel(n, 8, func(i int) error {
		at := base.Add(time.Duration(i%spread) * time.Second).UTC()
		resp, err := postJSON(nd.base+"/api/v1/scenarios/memos/rows", map[string]any{
			"content": "bench", "channel": "outbox", "when": "at " + at.Format("2006-01-02 15:04:05"),
		})
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var row task.Row
		if resp.StatusCode != http.StatusCreated {
			b, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("create row: %d %s", resp.StatusCode, b)
		}
		if err := json.NewDecoder(resp.Body).Decode(&row); err != nil {
			return err
		}
		ids[i] = row.ID
		return nil
	}); err != nil {
		return lagResult{}, err
	}
	if err := waitFor(func() bool { return armed.Load() >= int64(n) }, time.Until(base)); err != nil {
		return lagResult{}, fmt.Errorf("only %d of %d armed before the first slot", armed.Load(), n)
	}
	armRate := float64(n) / time.Since(created).Seconds()
	heapPerTask := float64(heap()-min(heap(), heapBefore)) / float64(n)
	last := base.Add(time.Duration(spread) * time.Second)
	if err := waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return len(lags) >= n }, time.Until(last)+time.Minute); err != nil {
		return lagResult{}, fmt.Errorf("only %d of %d fired", len(lags), n)
	}
	time.Sleep(2 * time.Second) // let deliveries write the ledger
	if err := nd.stop(); err != nil {
		return lagResult{}, err
	}
	ledger, err := ledgerLags(nd.dbPath, ids)
	if err != nil {
		return lagResult{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	return lagResult{fire: distribution(lags), ledger: distribution(ledger), heapPerTask: heapPerTask, armRate: armRate}, nil
}

// ledgerLags reads each task's run and returns fired_at − slot.
func ledgerLags(dbPath string, ids []string) ([]time.Duration, error) {
	st, err := sqlite.Open(context.Background(), dbPath)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	out := make([]time.Duration, 0, len(ids))
	for _, id := range ids {
		runs, err := st.ListRuns(context.Background(), id, time.Time{}, 10)
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			out = append(out, r.FiredAt.Sub(r.Slot))
		}
	}
	if len(out) != len(ids) {
		return out, fmt.Errorf("ledger has %d runs for %d tasks", len(out), len(ids))
	}
	return out, nil
}

// editCase creates rows one at a time and measures POST → armed.
func editCase(n int) (dist, error) {
	var mu sync.Mutex
	armedAt := map[string]time.Time{}
	nd, err := startNode(nil, server.WithArmObserver(func(id string) {
		mu.Lock()
		armedAt[id] = time.Now()
		mu.Unlock()
	}))
	if err != nil {
		return dist{}, err
	}
	defer os.RemoveAll(nd.dir)
	defer nd.stop()
	var ds []time.Duration
	for i := range n {
		id := fmt.Sprintf("edit%05d", i)
		start := time.Now()
		resp, err := postJSON(nd.base+"/api/v1/scenarios/memos/rows", map[string]any{
			"memo_id": id, "content": "edit", "channel": "outbox", "when": "every 1h",
		})
		if err != nil {
			return dist{}, err
		}
		resp.Body.Close()
		if err := waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return !armedAt[id].IsZero() }, 10*time.Second); err != nil {
			return dist{}, fmt.Errorf("row %s not armed", id)
		}
		mu.Lock()
		ds = append(ds, armedAt[id].Sub(start))
		mu.Unlock()
	}
	return distribution(ds), nil
}

func waitFor(cond func() bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out")
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

func parallel(n, workers int, f func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
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

// parkCases arms n tasks due an hour from now, each at its own second,
// once with the default arming window (they are parked) and once with the
// window off (each holds its task and a timer), and prints the heap per
// armed task of each.
func parkCases(n int) error {
	fmt.Printf("| tasks due in 1 h+ | arm_window | heap/armed task | created+armed/s |\n|---:|---|---:|---:|\n")
	for _, window := range []time.Duration{config.Default().Fire.ArmWindow, 0} {
		perTask, rate, err := parkCase(n, window)
		if err != nil {
			return fmt.Errorf("park %d (window %s): %w", n, window, err)
		}
		fmt.Printf("| %d | %s | %s | %.0f |\n", n, window, kib(perTask), rate)
	}
	return nil
}

func parkCase(n int, window time.Duration) (heapPerTask, armRate float64, err error) {
	var armed atomic.Int64
	nd, err := startNode(func(c *config.Config) { c.Fire.ArmWindow = window },
		server.WithArmObserver(func(string) { armed.Add(1) }))
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(nd.dir)
	defer nd.stop()
	heapBefore := heap()
	created := time.Now()
	if err := createFarRows(nd, n); err != nil {
		return 0, 0, err
	}
	if err := waitFor(func() bool { return armed.Load() >= int64(n) }, 30*time.Minute); err != nil {
		return 0, 0, fmt.Errorf("only %d of %d armed", armed.Load(), n)
	}
	armRate = float64(n) / time.Since(created).Seconds()
	return float64(heap()-min(heap(), heapBefore)) / float64(n), armRate, nil
}

// restartCase creates n rows due an hour ahead, each at its own second,
// waits until they are armed, stops the node (which releases its claims)
// and times a new node on the same store re-arming all of them. Both nodes
// run with the arming window off (fire.arm_window 0): with it, tasks due
// an hour ahead are handed back to the store once armed and a new node
// claims none of them until their time (jobs-bench -pending measures that
// restart).
func restartCase(n int) error {
	var armed atomic.Int64
	noWindow := func(c *config.Config) { c.Fire.ArmWindow = 0 }
	nd, err := startNode(noWindow, server.WithArmObserver(func(string) { armed.Add(1) }))
	if err != nil {
		return err
	}
	defer os.RemoveAll(nd.dir)
	if err := createFarRows(nd, n); err != nil {
		nd.stop()
		return err
	}
	if err := waitFor(func() bool { return armed.Load() >= int64(n) }, 30*time.Minute); err != nil {
		nd.stop()
		return fmt.Errorf("only %d of %d armed", armed.Load(), n)
	}
	stopped := time.Now()
	if err := nd.stop(); err != nil {
		return err
	}
	stopTime := time.Since(stopped)
	var rearmed atomic.Int64
	started := time.Now()
	again, err := startNode(func(c *config.Config) { noWindow(c); c.Store.Path = nd.dbPath },
		server.WithArmObserver(func(string) { rearmed.Add(1) }))
	if err != nil {
		return err
	}
	defer os.RemoveAll(again.dir)
	defer again.stop()
	if err := waitFor(func() bool { return rearmed.Load() >= int64(n) }, 30*time.Minute); err != nil {
		return fmt.Errorf("only %d of %d re-armed", rearmed.Load(), n)
	}
	took := time.Since(started)
	fmt.Printf("| tasks | graceful stop | start → all re-armed | re-armed/s |\n|---:|---:|---:|---:|\n")
	fmt.Printf("| %d | %s | %s | %.0f |\n", n, stopTime.Round(time.Millisecond), took.Round(time.Millisecond), float64(n)/took.Seconds())
	return nil
}

// createFarRows creates n one-off rows through the API, due an hour from
// now, each at its own second.
func createFarRows(nd *node, n int) error {
	base := time.Now().Add(time.Hour).Truncate(time.Second)
	return parallel(n, 8, func(i int) error {
		at := base.Add(time.Duration(i) * time.Second).UTC()
		resp, err := postJSON(nd.base+"/api/v1/scenarios/memos/rows", map[string]any{
			"content": "bench", "channel": "outbox", "when": "at " + at.Format("2006-01-02 15:04:05"),
		})
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			b, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("create row: %d %s", resp.StatusCode, b)
		}
		return nil
	})
}
