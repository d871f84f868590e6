package mongo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.uber.org/goleak"

	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/store/storetest"
	"cronsheet/task"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testURI returns the test server's URI or skips t (see mongotest.URI).
func testURI(t testing.TB) string {
	t.Helper()
	return mongotest.URI(t, "the MongoDB driver's tests")
}

// openTemp opens a store on a new database of its own; when t ends the
// database is dropped and the store closed.
func openTemp(t testing.TB, uri string) *mongo.Store {
	t.Helper()
	db := mongotest.TempDatabase(t, uri, "cronsheet_test_")
	s, err := mongo.Open(t.Context(), mongo.Config{URI: uri, Database: db})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// suiteOptions asks the server what it is. Every case runs on both: on
// FerretDB, whose conditional updates are not atomic across processes,
// the concurrency cases (one store, many goroutines) pass because the
// driver serialises one store's writes to a collection there (see
// collection.go); they prove atomicity within a process only.
func suiteOptions(t *testing.T, uri string) []storetest.Option {
	t.Helper()
	probe := openTemp(t, uri)
	info, err := probe.ServerInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.FerretDB {
		t.Logf("server is FerretDB (buildInfo version %s): concurrency cases hold within this process only", info.Version)
		return nil
	}
	t.Logf("server is MongoDB %s", info.Version)
	return nil
}

func TestConformance(t *testing.T) {
	uri := testURI(t)
	opts := append(suiteOptions(t, uri), storetest.WithRawDeleteRow(func(ctx context.Context, s store.Product, scenario, id string) error {
		_, err := mongo.Collection(s.(keepOpen).Store, "rows").DeleteOne(ctx, bson.D{{Key: "scenario", Value: scenario}, {Key: "id", Value: id}})
		return err
	}))
	storetest.Run(t, func(t *testing.T) store.Product {
		return keepOpen{openTemp(t, uri)}
	}, opts...)
}

func TestControlConformance(t *testing.T) {
	uri := testURI(t)
	storetest.RunControl(t, func(t *testing.T) store.Product {
		return keepOpen{openTemp(t, uri)}
	}, suiteOptions(t, uri)...)
}

// keepOpen leaves closing to openTemp's cleanup, which runs after the
// suite's Close and must drop the database first.
type keepOpen struct{ *mongo.Store }

func (keepOpen) Close() error { return nil }

func TestOpenUnreachableFailsAfterBoundedWait(t *testing.T) {
	start := time.Now()
	_, err := mongo.Open(t.Context(), mongo.Config{URI: "mongodb://127.0.0.1:1/", Database: "x",
		ConnectTimeout: 500 * time.Millisecond})
	if err == nil {
		t.Fatal("Open of an unreachable server: no error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Open took %v, want about the 500ms connect timeout", d)
	}
	if !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("error %q does not name the server", err)
	}
}

func TestOpenValidates(t *testing.T) {
	for _, cfg := range []mongo.Config{{Database: "x"}, {URI: "mongodb://127.0.0.1/"}} {
		if _, err := mongo.Open(t.Context(), cfg); !errors.Is(err, task.ErrInvalid) {
			t.Errorf("Open(%+v) = %v, want ErrInvalid", cfg, err)
		}
	}
	if _, err := mongo.Open(t.Context(), mongo.Config{URI: "http://x", Database: "x"}); err == nil {
		t.Errorf("Open with a non-mongodb URI: no error")
	}
}

func TestOpenIsIdempotent(t *testing.T) {
	uri := testURI(t)
	s := openTemp(t, uri)
	row := &task.Row{Scenario: "memos", ID: "r1", Fields: map[string]any{"memo": "kept"}}
	if err := s.InsertRow(t.Context(), row); err != nil {
		t.Fatal(err)
	}
	// A second Open of the same database creates the indexes again.
	s2, err := mongo.Open(t.Context(), mongo.Config{URI: uri, Database: s.Database()})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	got, err := s2.GetRow(t.Context(), "memos", "r1")
	if err != nil || got.Fields["memo"] != "kept" {
		t.Fatalf("GetRow after reopen = %+v, %v", got, err)
	}
	if err := s2.InsertRow(t.Context(), &task.Row{Scenario: "memos", ID: "r1"}); !errors.Is(err, task.ErrConflict) {
		t.Errorf("duplicate row after reopen: %v, want ErrConflict (unique index kept)", err)
	}
}

// TestLedgerRaceHoldsOnAnyServer races firers for the same slots. Unlike
// storetest's concurrency cases it also runs on FerretDB: the ledger gate is
// the unique index, which holds there.
func TestLedgerRaceHoldsOnAnyServer(t *testing.T) {
	s := openTemp(t, testURI(t))
	const workers, slots = 6, 60
	base := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	wins := make([]int, workers)
	errs := make([]error, workers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			<-start
			for i := range slots {
				i = (i + w*7) % slots // each worker in another order
				r := &task.Run{TriggerID: fmt.Sprintf("w%d-s%d", w, i), TaskID: "t", Target: "email",
					Slot: base.Add(time.Duration(i) * time.Minute), TriggerType: task.TriggerSchedule}
				ok, err := s.InsertRun(t.Context(), r)
				if err != nil {
					errs[w] = err
					return
				}
				if ok {
					wins[w]++
				}
			}
		})
	}
	close(start)
	wg.Wait()
	total := 0
	for w := range workers {
		if errs[w] != nil {
			t.Errorf("firer %d: %v", w, errs[w])
		}
		total += wins[w]
	}
	runs, err := s.ListRuns(t.Context(), "t", time.Time{}, 10*slots)
	if err != nil {
		t.Fatal(err)
	}
	if total != slots || len(runs) != slots {
		t.Errorf("InsertRun won %d times and the ledger holds %d runs, want %d each", total, len(runs), slots)
	}
}

func TestFlowsConformance(t *testing.T) {
	uri := testURI(t)
	storetest.RunFlows(t, func(t *testing.T) store.Product {
		return keepOpen{openTemp(t, uri)}
	}, suiteOptions(t, uri)...)
}

// TestFerretWritesOutliveCancel: on FerretDB a write is carried out even
// when its context is cancelled, and answers before the next write to its
// collection starts. A write the client abandoned went on inside FerretDB
// while the collection's next write ran beside it: a graceful stop's
// release of every claim then lost, now and then, to a stale copy of a
// claimed document written back after it (TestGracefulStopWithManyClaims,
// about one run in four). On MongoDB, whose writes are atomic, a cancelled
// write is simply not sent.
func TestFerretWritesOutliveCancel(t *testing.T) {
	s := openTemp(t, testURI(t))
	info, err := s.ServerInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tg := &task.Target{ID: "mail", Kind: task.ChannelEmail, State: task.TargetRunning}
	err = s.CreateTarget(cancelled, tg)
	_, gerr := s.GetTarget(t.Context(), "mail")
	switch {
	case !info.FerretDB:
		if !errors.Is(err, context.Canceled) || !errors.Is(gerr, task.ErrNotFound) {
			t.Errorf("MongoDB: a write with a cancelled context = %v, then read %v; want context.Canceled and not found", err, gerr)
		}
	case err != nil || gerr != nil:
		t.Errorf("FerretDB: a write with a cancelled context = %v, then read %v; want it carried out", err, gerr)
	}
}
