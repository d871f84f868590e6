package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/store/storetest"
	"cronsheet/task"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// openTemp opens a store in a fresh file of t's temporary directory.
func openTemp(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "cronsheet.db"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Product { return openTemp(t) },
		storetest.WithRawDeleteRow(func(ctx context.Context, s store.Product, scenario, id string) error {
			return sqlite.ExecRaw(ctx, s.(*sqlite.Store), `DELETE FROM rows WHERE scenario = ? AND id = ?`, scenario, id)
		}))
}

func TestControlConformance(t *testing.T) {
	storetest.RunControl(t, func(t *testing.T) store.Product { return openTemp(t) })
}

func TestJobsConformance(t *testing.T) {
	storetest.RunJobs(t, func(t *testing.T) store.Product { return openTemp(t) })
}

func TestOpenCreatesDirAndIsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b?c#d%e", "cronsheet.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	row := &task.Row{Scenario: "memos", ID: "r1", Fields: map[string]any{"memo": "kept"}}
	if err := s.InsertRow(t.Context(), row); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not at the given path: %v", err)
	}

	// Opening again applies the schema again and keeps the data.
	s, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	got, err := s.GetRow(t.Context(), "memos", "r1")
	if err != nil || got.Fields["memo"] != "kept" {
		t.Fatalf("GetRow after reopen = %v, %v", got, err)
	}

	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(filepath.Join(filepath.Dir(filepath.Dir(path)), "b%3fc%23d%25e", "cronsheet.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestOpenRejectsNonFilePaths(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file::memory:?cache=shared"} {
		s, err := sqlite.Open(t.Context(), p)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q): no error", p)
			continue
		}
		if !errors.Is(err, task.ErrInvalid) {
			t.Errorf("Open(%q) = %v, want task.ErrInvalid", p, err)
		}
	}
}

func TestCloseReleasesFile(t *testing.T) {
	dir := t.TempDir()
	s, err := sqlite.Open(t.Context(), filepath.Join(dir, "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	// Use prepared statements on the writer (also in a transaction) and on
	// several readers at once, so that each connection holds some.
	addBenchTasks(t, s, 2)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := s.GetTask(t.Context(), "t-000001"); err != nil {
				t.Error(err)
			}
			if _, err := s.ListUnfetchedRows(t.Context(), 10); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A call after Close names the cause.
	if _, err := s.GetTask(t.Context(), "t-000001"); err == nil || !strings.Contains(err.Error(), "database is closed") {
		t.Errorf("GetTask after Close = %v, want sql: database is closed", err)
	}
	// The last connection to close checkpoints and removes the WAL; a
	// statement left unfinalized would keep its connection (and the WAL)
	// open.
	if _, err := os.Stat(filepath.Join(dir, "x.db-wal")); !os.IsNotExist(err) {
		t.Errorf("x.db-wal still there after Close: %v", err)
	}
}

// TestTwoStoresOnOneFile races two Stores (each with its own writer
// connection, as two processes would have) over one file: claims and ledger
// inserts stay exactly-once across them.
func TestTwoStoresOnOneFile(t *testing.T) {
	const tasks, workers = 60, 3
	path := filepath.Join(t.TempDir(), "shared.db")
	stores := make([]*sqlite.Store, 2)
	for i := range stores {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	addBenchTasks(t, stores[0], tasks)

	var (
		mu      sync.Mutex
		claimed = map[string]int{}
		wins    int
		wg      sync.WaitGroup
	)
	start := make(chan struct{})
	for i, s := range stores {
		for w := range workers {
			owner := fmt.Sprintf("store%d-w%d", i, w)
			wg.Go(func() {
				<-start
				for {
					got, err := s.ClaimTasks(t.Context(), store.ClaimParams{Owner: owner, LeaseUntil: time.Now().Add(time.Hour), Limit: 4})
					if err != nil {
						t.Errorf("%s: ClaimTasks: %v", owner, err)
						return
					}
					if len(got) == 0 {
						break
					}
					mu.Lock()
					for _, tk := range got {
						claimed[tk.TaskID]++
					}
					mu.Unlock()
				}
				for k := range tasks {
					r := &task.Run{TriggerID: owner + fmt.Sprint(k), TaskID: "t", Slot: time.UnixMilli(int64(k + 1)),
						Target: "email", TriggerType: task.TriggerSchedule, State: task.RunRunning}
					ok, err := s.InsertRun(t.Context(), r)
					if err != nil {
						t.Errorf("%s: InsertRun: %v", owner, err)
						return
					}
					if ok {
						mu.Lock()
						wins++
						mu.Unlock()
					}
				}
			})
		}
	}
	close(start)
	wg.Wait()
	if len(claimed) != tasks {
		t.Errorf("%d tasks claimed, want %d", len(claimed), tasks)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("task %s claimed %d times", id, n)
		}
	}
	if wins != tasks {
		t.Errorf("InsertRun won %d times, want %d", wins, tasks)
	}
}

func TestFlowsConformance(t *testing.T) {
	storetest.RunFlows(t, func(t *testing.T) store.Product { return openTemp(t) })
}
