package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"cronsheet/tools/bench/internal/benchkit"
)

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
	err = benchkit.Parallel(o.n, o.clients, func(i int) error {
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
	benchkit.Progress("asynq: one job per request: %.0f/s; %.0f B of Redis memory per pending job", r.single, r.memPerPending)
	if err := rc.FlushAll(ctx).Err(); err != nil {
		return r, err
	}

	// Each size due at one instant, then n spread over o.spread seconds.
	for _, n := range o.instantSizes() {
		d, last, err := asynqLag(o, opt, client, n, 0)
		if err != nil {
			return r, err
		}
		r.instants = append(r.instants, instantResult{n: n, drain: float64(n) / last.Seconds(), lag: d, lastAfterS: last.Seconds()})
		benchkit.Progress("asynq: %d due at one instant: lag p99 %s, last done %s after the due instant", n, benchkit.MS(d.P99), benchkit.Secs(last))
		if err := rc.FlushAll(ctx).Err(); err != nil {
			return r, err
		}
	}
	d, _, err := asynqLag(o, opt, client, o.n, o.spread)
	if err != nil {
		return r, err
	}
	r.spread = d
	benchkit.Progress("asynq: %d due over %d s: lag p99 %s", o.n, o.spread, benchkit.MS(d.P99))
	if err := rc.FlushAll(ctx).Err(); err != nil {
		return r, err
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

// asynqLag enqueues n jobs due from a whole second o.budgetFor(n) ahead, over
// spread seconds (0: all at that instant; else N/spread at each whole
// second: asynq keeps a scheduled job's time in whole seconds), runs a
// server with a no-op handler that records when each started, and returns
// the lags (due → handler start) and the first due instant → the last
// handler's end.
func asynqLag(o options, opt asynq.RedisClientOpt, client *asynq.Client, n, spread int) (benchkit.Dist, time.Duration, error) {
	settle()
	budget := o.budgetFor(n)
	first := time.Now().Add(budget).Truncate(time.Second).Add(time.Second)
	dueOf := func(i int) time.Time {
		return first.Add(time.Duration(spread) * time.Second * time.Duration(i) / time.Duration(n)).Truncate(time.Second)
	}
	err := benchkit.Parallel(n, o.clients, func(i int) error {
		_, err := client.Enqueue(asynq.NewTask("bench", payload(i, dueOf(i))), asynq.ProcessAt(dueOf(i)), asynq.MaxRetry(0))
		return err
	})
	if err != nil {
		return benchkit.Dist{}, 0, fmt.Errorf("enqueue: %w", err)
	}
	if time.Now().After(first) {
		return benchkit.Dist{}, 0, fmt.Errorf("enqueueing %d jobs took longer than the budget %s", n, budget)
	}
	lags := make([]time.Duration, 0, n)
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
		return benchkit.Dist{}, 0, err
	}
	defer srv.Shutdown()
	end := first.Add(time.Duration(spread)*time.Second + 5*time.Minute)
	for done.Load() < int64(n) {
		if time.Now().After(end) {
			return benchkit.Dist{}, 0, fmt.Errorf("only %d of %d jobs handled 5 min after the last due instant", done.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	return benchkit.Distribution(lags), time.Unix(0, last.Load()).Sub(first), nil
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
