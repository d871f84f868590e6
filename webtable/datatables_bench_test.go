package webtable_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/internal/apitest"
	"cronsheet/mapping"
	"cronsheet/task"
	"cronsheet/webtable"
)

// BenchmarkTablePage measures the DataTables endpoint end to end (parse,
// store, JSON) at 1k, 10k and 100k memos, reporting p50 and p95 per
// request, on the test driver (CRONSHEET_TEST_DRIVER):
//
//	go test ./webtable/ -run '^$' -bench TablePage -benchtime 200x
//	CRONSHEET_TEST_DRIVER=mongo CRONSHEET_TEST_MONGO_URI=mongodb://127.0.0.1:PORT/ \
//	  go test ./webtable/ -run '^$' -bench TablePage -benchtime 5x -timeout 60m
//
// first: page 1 in id order; deep: the last page in id order; sorted: the
// middle page sorted by title, descending; searched: 1 in 1000 rows match,
// sorted by title; searched-broad: every row matches (the count and the
// sort see them all: the worst case).
func BenchmarkTablePage(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			router := benchTable(b, n)
			cases := []struct {
				name string
				kv   []string
			}{
				{"first", []string{"start", "0"}},
				{"deep", []string{"start", strconv.Itoa(n - 25)}},
				{"sorted", []string{"start", strconv.Itoa(n / 2), "order[0][column]", "1", "order[0][dir]", "desc"}},
				{"searched", []string{"search[value]", "zebrafish", "order[0][column]", "1"}},
				{"searched-broad", []string{"search[value]", "memo", "order[0][column]", "1"}},
			}
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					q := url.Values{"draw": {"1"}, "length": {"25"}}
					for i, col := range []string{"fields.memo_id", "fields.title", "fields.content", "fields.when"} {
						q.Set(fmt.Sprintf("columns[%d][data]", i), col)
					}
					for i := 0; i < len(c.kv); i += 2 {
						q.Set(c.kv[i], c.kv[i+1])
					}
					target := "/api/v1/scenarios/memos/table?" + q.Encode()
					benchPage(b, router, target)
				})
			}
		})
	}
}

// benchTable fills a store with n memos (1 in 1000 mentions a zebrafish)
// and returns the table endpoint over it.
func benchTable(b *testing.B, n int) http.Handler {
	b.Helper()
	ctx := context.Background()
	st := apitest.OpenStore(b)
	words := []string{"water the plants", "call mum", "stand-up", "pay the rent", "backup the laptop"}
	start := time.Now()
	// SQLite has one writer; a MongoDB server takes inserts in parallel.
	workers := 1
	if apitest.Driver() == "mongo" {
		workers = 8
	}
	fill := func(w int) error {
		for i := w; i < n; i += workers {
			content := words[i%len(words)]
			if i%1000 == 7 {
				content = "feed the zebrafish"
			}
			id := fmt.Sprintf("m%07d", (i*7919)%n) // ids in scattered order
			fields := map[string]any{"memo_id": id, "title": fmt.Sprintf("memo %x", i*2654435761%1000003),
				"content": content, "when": "every 1h", "channel": "outbox"}
			if err := st.InsertRow(ctx, &task.Row{Scenario: "memos", ID: id, IsActive: 1, Fields: fields}); err != nil {
				return err
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() { errs[w] = fill(w) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	inserted := time.Since(start)
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		b.Fatal(err)
	}
	tbl := webtable.NewTable(webtable.TableDeps{Store: st, Scenarios: map[string]*mapping.Scenario{"memos": memos}})
	start = time.Now()
	if err := tbl.Prepare(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("%s, %d rows: insert %s, prepare (search + sort indexes) %s", apitest.Driver(), n, inserted.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond))
	r := gin.New()
	tbl.Register(r)
	return r
}

// benchPage requests target from router b.N times, failing on any answer
// but 200, and reports the latencies' p50 and p95 in milliseconds.
func benchPage(b *testing.B, router http.Handler, target string) {
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		rec := httptest.NewRecorder()
		start := time.Now()
		router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		lat = append(lat, time.Since(start))
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
	slices.Sort(lat)
	p := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(p(0.50), "p50-ms")
	b.ReportMetric(p(0.95), "p95-ms")
}
