package webtable_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/internal/apitest"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
	"cronsheet/webtable"
)

// crashingStore is the real store until `after` rows were inserted: then
// the process is dead, as under kill -9, and every later call fails
// (the handler can neither insert nor undo anything).
type crashingStore struct {
	store.Product
	after    int64
	inserted atomic.Int64
	dead     atomic.Bool
}

var errDead = errors.New("the process was killed")

func (s *crashingStore) InsertRow(ctx context.Context, row *task.Row) error {
	if s.dead.Load() || s.inserted.Load() >= s.after {
		s.dead.Store(true)
		return errDead
	}
	s.inserted.Add(1)
	return s.Product.InsertRow(ctx, row)
}

func (s *crashingStore) DeleteRow(ctx context.Context, scenario, id string) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Product.DeleteRow(ctx, scenario, id)
}

// importRouter serves the memos import over st.
func importRouter(t *testing.T, st webtable.Store) *gin.Engine {
	t.Helper()
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	api := webtable.New(webtable.Deps{Logger: slog.New(slog.DiscardHandler), Store: st,
		Scenarios: map[string]*mapping.Scenario{"memos": memos}, Now: func() time.Time { return apitest.FixedNow }})
	r := gin.New()
	api.Register(r)
	return r
}

func postImport(t *testing.T, r *gin.Engine, csv string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, importPath, strings.NewReader(csv))
	req.Header.Set("Content-Type", "text/csv")
	r.ServeHTTP(rec, req)
	return rec
}

// TestImportCrashRerunFinishes: an import killed part
// way leaves the rows it stored; posting the same file again stores the
// rest, each line exactly once (lines with and without an id), and says
// how many were there already. A file whose ids exist with other fields is
// refused with the exact count, however many.
func TestImportCrashRerunFinishes(t *testing.T) {
	t.Parallel()
	n, cut := 10_000, int64(4_928)
	if apitest.Driver() == "mongo" {
		n, cut = 1_000, 487 // FerretDB takes several ms a row, and the test reads each row 3 times
	}
	var sb strings.Builder
	sb.WriteString("memo_id,title,when\n")
	for i := range n {
		id := ""
		if i%2 == 0 {
			id = fmt.Sprintf("imp-%05d", i) // every other line names its id
		}
		fmt.Fprintf(&sb, "%s,line %d,every 1h\n", id, i)
	}
	file := sb.String()

	base := apitest.OpenStore(t)
	crashing := &crashingStore{Product: base, after: cut}
	if rec := postImport(t, importRouter(t, crashing), file); rec.Code != http.StatusInternalServerError {
		t.Fatalf("the killed import answered %d %s", rec.Code, rec.Body)
	}
	count := func() int {
		t.Helper()
		total, after := 0, ""
		for {
			rows, err := base.ListRows(context.Background(), "memos", after, 500)
			if err != nil {
				t.Fatal(err)
			}
			total += len(rows)
			if len(rows) < 500 {
				return total
			}
			after = rows[len(rows)-1].ID
		}
	}
	if got := count(); got != int(cut) {
		t.Fatalf("rows after the kill = %d, want %d (what the import stored before it died)", got, cut)
	}

	// The restarted node: the same file again finishes the job.
	r := importRouter(t, base)
	got := apitest.Want[struct {
		Imported        int      `json:"imported"`
		AlreadyImported int      `json:"already_imported"`
		ImportID        string   `json:"import_id"`
		IDs             []string `json:"ids"`
	}](t, postImport(t, r, file), http.StatusCreated)
	if got.Imported != n-int(cut) || got.AlreadyImported != int(cut) || len(got.IDs) != n || got.ImportID == "" {
		t.Fatalf("re-run: imported %d, already %d, %d ids, import id %q; want %d, %d, %d",
			got.Imported, got.AlreadyImported, len(got.IDs), got.ImportID, n-int(cut), cut, n)
	}
	if c := count(); c != n {
		t.Fatalf("rows after the re-run = %d, want %d", c, n)
	}
	seen := map[string]bool{}
	for _, id := range got.IDs {
		if seen[id] {
			t.Fatalf("id %s listed twice", id)
		}
		seen[id] = true
	}
	// Once more: nothing left to do.
	again := apitest.Want[struct {
		Imported        int `json:"imported"`
		AlreadyImported int `json:"already_imported"`
	}](t, postImport(t, r, file), http.StatusOK)
	if again.Imported != 0 || again.AlreadyImported != n {
		t.Errorf("third run: %+v, want 0 imported, %d already", again, n)
	}

	// The same ids with other fields: refused, counted exactly (the lines
	// that name an id; the others are new lines of another file).
	other := strings.ReplaceAll(file, ",line ", ",changed ")
	refused := apitest.Want[importAnswer](t, postImport(t, r, other), http.StatusConflict)
	if want := fmt.Sprintf("%d rows already exist with other fields; nothing was imported", n/2); !strings.HasPrefix(refused.Error, want) {
		t.Errorf("conflict: %q, want it to start %q", refused.Error, want)
	}
	if c := count(); c != n {
		t.Errorf("rows after the refused import = %d, want %d", c, n)
	}
}
