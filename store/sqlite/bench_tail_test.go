package sqlite

import (
	"fmt"
	"os"
	"testing"

	"cronsheet/store"
	"cronsheet/task"
)

// BenchmarkHistoryTail times QueryRuns pages over the file of
// BenchmarkHistory (CRONSHEET_HISTORY_DB, filled by it first) while its
// newest historyEager runs are unlisted, the largest tail the loop leaves
// while runs keep coming; it lists them again at the end.
func BenchmarkHistoryTail(b *testing.B) {
	path := os.Getenv("CRONSHEET_HISTORY_DB")
	if path == "" {
		b.Skip("CRONSHEET_HISTORY_DB is not set")
	}
	ctx := b.Context()
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	s.stopHistory()
	<-s.historyDone
	defer s.Close()
	if _, err := s.w.ExecContext(ctx, `UPDATE runs_history SET mark = (SELECT max(id) FROM runs) - ?1;
		UPDATE runs SET unlisted = 1 WHERE id > (SELECT mark FROM runs_history)`, historyEager); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if n, err := s.listHistory(ctx); err != nil || n != historyEager {
			b.Errorf("listHistory = %d, %v", n, err)
		}
	}()
	var mid int64
	if err := s.r.QueryRowContext(ctx, `SELECT fired_at FROM runs WHERE id = (SELECT max(id) / 2 FROM runs)`).Scan(&mid); err != nil {
		b.Fatal(err)
	}
	deep := store.RunCursor{FiredAt: store.FromUnixMS(mid), TriggerID: "tr_"}
	for _, c := range []struct {
		name string
		q    store.RunQuery
	}{
		{"FirstPage", store.RunQuery{}},
		{"DeepPage", store.RunQuery{Before: deep}},
		{"Task", store.RunQuery{TaskID: "t-054321"}},
		{"Target", store.RunQuery{Target: "hook-07"}},
		{"StateRunning", store.RunQuery{State: task.RunRunning}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				q := c.q
				q.Limit = 51
				if runs, err := s.QueryRuns(ctx, q); err != nil || len(runs) == 0 {
					b.Fatal(fmt.Sprint(len(runs)), err)
				}
			}
		})
	}
}
