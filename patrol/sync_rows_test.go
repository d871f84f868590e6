package patrol_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/mapping"
	"cronsheet/patrol"
	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// syncDrivers opens a fresh store of each driver, closed when t ends; the
// mongo one needs CRONSHEET_TEST_MONGO_URI (skipped without it, outside CI).
var syncDrivers = map[string]func(t *testing.T) store.Store{
	"sqlite": func(t *testing.T) store.Store {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	},
	"mongo": func(t *testing.T) store.Store {
		uri := mongotest.URI(t, "the sync patrol's tests on the mongo driver")
		db := mongotest.TempDatabase(t, uri, "cronsheet_patrol_")
		st, err := mongo.Open(t.Context(), mongo.Config{URI: uri, Database: db})
		if err != nil {
			t.Fatalf("open mongo: %v", err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	},
}

// faultyRows is a real store whose ApplySync fails, with an error of the
// store's own (not a conflict, not invalid input), for the rows in fail,
// and that deletes the rows in remove right after the sync patrol listed
// them, as a user deleting a row during the pass would.
type faultyRows struct {
	store.Store
	mu     sync.Mutex
	fail   map[string]bool
	remove []string
}

func (s *faultyRows) ListUnfetchedRows(ctx context.Context, limit int) ([]*task.Row, error) {
	rows, err := s.Store.ListUnfetchedRows(ctx, limit)
	s.mu.Lock()
	remove := s.remove
	s.remove = nil
	s.mu.Unlock()
	for _, id := range remove {
		if err := s.Store.DeleteRow(ctx, scenario, id); err != nil {
			return nil, fmt.Errorf("delete %s during the pass: %w", id, err)
		}
	}
	return rows, err
}

func (s *faultyRows) ApplySync(ctx context.Context, p store.ApplySyncParams) error {
	s.mu.Lock()
	fail := s.fail[p.RowID]
	s.mu.Unlock()
	if fail {
		return errors.New("disk I/O error")
	}
	return s.Store.ApplySync(ctx, p)
}

func (s *faultyRows) heal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = nil
}

// TestSyncRowFailureSparesOthers: a row whose sync fails in the store,
// and a row deleted while the pass runs, do not abort the pass: every
// other row of the batch is synced, the failure is reported with its row,
// and the failed row is synced on the next pass.
func TestSyncRowFailureSparesOthers(t *testing.T) {
	t.Parallel()
	for name, open := range syncDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base := open(t)
			ctx := t.Context()
			for i := 1; i <= 5; i++ {
				row := &task.Row{Scenario: scenario, ID: fmt.Sprintf("r%d", i), Fields: memo(fmt.Sprintf("m%d", i)), IsActive: 1}
				if err := base.InsertRow(ctx, row); err != nil {
					t.Fatalf("insert %s: %v", row.ID, err)
				}
				time.Sleep(2 * time.Millisecond) // listed in insertion order (updated_at)
			}
			st := &faultyRows{Store: base, fail: map[string]bool{"r2": true}, remove: []string{"r4"}}
			memos, err := mapping.New(mapping.MemosConfig())
			if err != nil {
				t.Fatal(err)
			}
			logger := slog.New(slog.NewTextHandler(t.Output(), nil))
			now := func() time.Time { return start }
			s := patrol.NewSync(logger, st, map[string]patrol.Mapper{scenario: memos}, 0, now)

			res, err := s.RunOnce(ctx)
			if want := (patrol.SyncResult{Synced: 3, Gone: 1, Failed: 1}); res != want {
				t.Errorf("sync = %+v, want %+v", res, want)
			}
			if err == nil || !strings.Contains(err.Error(), "memos/r2") || !strings.Contains(err.Error(), "disk I/O error") ||
				!strings.Contains(err.Error(), "1 of 5 rows failed") {
				t.Errorf("sync error = %v, want it to say 1 of 5 rows failed and name memos/r2 with its cause", err)
			}
			for _, id := range []string{"r1", "r3", "r5"} {
				row, err := base.GetRow(ctx, scenario, id)
				if err != nil {
					t.Fatal(err)
				}
				checkRowState(t, row, 1, task.RowActive)
				if tk, err := base.GetTask(ctx, "m"+id[1:]); err != nil || tk.IsEnable != 1 {
					t.Errorf("task of %s: %+v, %v; want it enabled", id, tk, err)
				}
			}
			if row, err := base.GetRow(ctx, scenario, "r2"); err != nil || row.IsFetched != 0 || row.IsActive == task.RowError {
				t.Errorf("failed row r2: %+v, %v; want it left unfetched, not in error", row, err)
			}
			if _, err := base.GetTask(ctx, "m2"); !errors.Is(err, task.ErrNotFound) {
				t.Errorf("task m2: %v, want none yet", err)
			}
			if tk, err := base.GetTask(ctx, "m4"); err == nil && tk.IsEnable == 1 {
				t.Errorf("deleted row r4 has a live task %+v", tk)
			}

			st.heal()
			res, err = s.RunOnce(ctx)
			if err != nil || res != (patrol.SyncResult{Synced: 1}) {
				t.Fatalf("next sync = %+v, %v; want 1 synced", res, err)
			}
			row, err := base.GetRow(ctx, scenario, "r2")
			if err != nil {
				t.Fatal(err)
			}
			checkRowState(t, row, 1, task.RowActive)
		})
	}
}
