package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"cronsheet/store/sqlite"
	"cronsheet/task"
	"cronsheet/tools/bench/internal/benchkit"
	"cronsheet/tools/bench/internal/node"
)

// timeLayout is how a row's "at" instant is written.
const timeLayout = "2006-01-02 15:04:05"

// lagResult is one lag case's measurements.
type lagResult struct {
	fire, ledger benchkit.Dist
	heapPerTask  float64
	armRate      float64 // rows created through the API and armed, per second
}

// lagCase arms n one-time tasks due over `spread` seconds starting a little
// after they are all armed, and records each fire's lag.
func lagCase(n, spread int) (lagResult, error) {
	lags := benchkit.NewRecorder(n)
	var armed atomic.Int64
	nd, err := node.Start(context.Background(), node.Settings{
		OnFire: func(_ time.Time, lag time.Duration) { lags.Add(lag) },
		OnArm:  func(string) { armed.Add(1) },
	})
	if err != nil {
		return lagResult{}, err
	}
	defer nd.Close()
	heapBefore := benchkit.HeapBytes()
	// Rows are created through the API; the first slot leaves time to arm all.
	base := time.Now().Add(time.Duration(10+n/200) * time.Second).Truncate(time.Second)
	created := time.Now()
	ids := make([]string, n)
	if err := benchkit.Parallel(n, 8, func(i int) error {
		var row task.Row
		at := base.Add(time.Duration(i%spread) * time.Second).UTC()
		if err := createRow(nd.Base, at.Format(timeLayout), &row); err != nil {
			return err
		}
		ids[i] = row.ID
		return nil
	}); err != nil {
		return lagResult{}, err
	}
	if err := benchkit.WaitFor(func() bool { return armed.Load() >= int64(n) }, time.Until(base)); err != nil {
		return lagResult{}, fmt.Errorf("only %d of %d armed before the first slot", armed.Load(), n)
	}
	armRate := float64(n) / time.Since(created).Seconds()
	heapPerTask := float64(benchkit.HeapBytes()-min(benchkit.HeapBytes(), heapBefore)) / float64(n)
	last := base.Add(time.Duration(spread) * time.Second)
	if err := benchkit.WaitFor(func() bool { return lags.Len() >= n }, time.Until(last)+time.Minute); err != nil {
		return lagResult{}, fmt.Errorf("only %d of %d fired", lags.Len(), n)
	}
	time.Sleep(2 * time.Second) // let deliveries write the ledger
	if err := nd.Stop(); err != nil {
		return lagResult{}, err
	}
	ledger, err := ledgerLags(filepath.Join(nd.Dir, node.DBFile), ids)
	if err != nil {
		return lagResult{}, err
	}
	return lagResult{fire: lags.Dist(), ledger: benchkit.Distribution(ledger), heapPerTask: heapPerTask, armRate: armRate}, nil
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
func editCase(n int) (benchkit.Dist, error) {
	var mu sync.Mutex
	armedAt := map[string]time.Time{}
	nd, err := node.Start(context.Background(), node.Settings{OnArm: func(id string) {
		mu.Lock()
		armedAt[id] = time.Now()
		mu.Unlock()
	}})
	if err != nil {
		return benchkit.Dist{}, err
	}
	defer nd.Close()
	ds := make([]time.Duration, 0, n)
	for i := range n {
		id := fmt.Sprintf("edit%05d", i)
		start := time.Now()
		resp, err := postJSON(nd.Base+rowsURL, map[string]any{
			"memo_id": id, "content": "edit", "channel": "outbox", "when": "every 1h",
		})
		if err != nil {
			return benchkit.Dist{}, err
		}
		resp.Body.Close()
		if err := benchkit.WaitFor(func() bool { mu.Lock(); defer mu.Unlock(); return !armedAt[id].IsZero() }, 10*time.Second); err != nil {
			return benchkit.Dist{}, fmt.Errorf("row %s not armed", id)
		}
		mu.Lock()
		ds = append(ds, armedAt[id].Sub(start))
		mu.Unlock()
	}
	return benchkit.Distribution(ds), nil
}
