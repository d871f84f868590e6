package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// History search at scale. BenchmarkHistory runs only when
// CRONSHEET_HISTORY_DB names a file: when the file has no runs it is filled
// with CRONSHEET_HISTORY_RUNS runs (default 10,000,000) first, in bulk, and
// kept, so later runs (and other builds, which migrate it) reuse it:
//
//	CRONSHEET_HISTORY_DB=/tmp/history.db go test -run xxx -bench BenchmarkHistory ./store/sqlite
//
// The runs: 100,000 tasks of 100 runs each, three seconds apart; every
// fifth run has one of 50 targets, 3 % are running, 5 % dead, the rest
// done; fired_at trails the slot by up to a second, not in id order.
const (
	historyTasks   = 100_000
	historyTargets = 50
	historyBase    = int64(1_767_225_600_000) // 2026-01-01 in ms
	historyStep    = int64(3_000)
)

// qFillHistory inserts runs ?1 to ?2-1 (see above) in one statement.
const qFillHistory = `INSERT INTO runs (trigger_id, task_id, slot, target, trigger_type, state, attempt, node,
		fired_at, finished_at, next_attempt, error, output, params, deadline, feedback, fence)
	WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?2)
	SELECT printf('tr_%020d', i), printf('t-%06d', i % ?3), ?5 + i * ?6,
		CASE WHEN i % 5 = 0 THEN printf('hook-%02d', (i / 5) % ?4) ELSE '' END, 'schedule',
		CASE WHEN i % 100 < 3 THEN 'running' WHEN i % 100 < 8 THEN 'dead' ELSE 'done' END,
		1, 'node-1', ?5 + i * ?6 + (i * 7919) % 1000,
		CASE WHEN i % 100 < 3 THEN 0 ELSE ?5 + i * ?6 + 1500 END, 0,
		CASE WHEN i % 100 BETWEEN 3 AND 7 THEN 'exit status 1' ELSE '' END, 'ok', '', 0, '', 1
	FROM n`

// fillHistory fills path with n runs unless it has runs already, and
// returns how many it has.
func fillHistory(b *testing.B, path string, n int) int {
	ctx := b.Context()
	start := time.Now()
	s, err := sqlite.Open(ctx, path) // creates or migrates the schema
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("first open (schema applied or migrated) in %s", time.Since(start).Round(time.Millisecond))
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(wal)&_pragma=synchronous(off)&_pragma=cache_size(-1048576)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var have int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have > 0 {
		return have
	}
	start = time.Now()
	const chunk = 500_000
	for from := 0; from < n; from += chunk {
		if _, err := db.ExecContext(ctx, qFillHistory, from, min(from+chunk, n), historyTasks, historyTargets,
			historyBase, historyStep); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	b.Logf("filled %d runs in %s", n, time.Since(start).Round(time.Second))
	return n
}

// BenchmarkHistory times QueryRuns pages of 50 (the API's default, plus
// the one extra run it asks for) over the file CRONSHEET_HISTORY_DB.
func BenchmarkHistory(b *testing.B) {
	path := os.Getenv("CRONSHEET_HISTORY_DB")
	if path == "" {
		b.Skip("CRONSHEET_HISTORY_DB is not set")
	}
	n := 10_000_000
	if v := os.Getenv("CRONSHEET_HISTORY_RUNS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	n = fillHistory(b, path, n)
	opened := time.Now()
	s, err := sqlite.Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.Logf("%d runs; opened in %s", n, time.Since(opened).Round(time.Millisecond))
	mid := historyBase + int64(n/2)*historyStep
	deep := store.RunCursor{FiredAt: store.FromUnixMS(mid), TriggerID: fmt.Sprintf("tr_%020d", n/2)}
	title := []string{"t-000007", "t-012345", "t-042424", "t-077777", "t-099999"}
	cases := []struct {
		name string
		qs   []store.RunQuery
	}{
		{"FirstPage", []store.RunQuery{{}}},
		{"DeepPage", []store.RunQuery{{Before: deep}}},
		{"Task", []store.RunQuery{{TaskID: "t-054321"}}},
		{"TaskDeep", []store.RunQuery{{TaskID: "t-054321", Before: deep}}},
		{"Target", []store.RunQuery{{Target: "hook-07"}}},
		{"TargetDeep", []store.RunQuery{{Target: "hook-07", Before: deep}}},
		{"StateRunning", []store.RunQuery{{State: task.RunRunning}}},
		{"StateDead", []store.RunQuery{{State: task.RunDead}}},
		{"TaskState", []store.RunQuery{{TaskID: "t-054321", State: task.RunDone}}},
		{"Title5Tasks", func() []store.RunQuery {
			var qs []store.RunQuery
			for _, id := range title {
				qs = append(qs, store.RunQuery{TaskID: id})
			}
			return qs
		}()},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				for _, q := range c.qs {
					q.Limit = 51
					runs, err := s.QueryRuns(ctx, q)
					if err != nil {
						b.Fatal(err)
					}
					if len(runs) == 0 {
						b.Fatalf("%+v: no runs", q)
					}
				}
			}
		})
	}
}
