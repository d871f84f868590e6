package webtable_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/internal/apitest"
	"cronsheet/mapping"
	"cronsheet/task"
	"cronsheet/webtable"
)

// BenchmarkTableNextFire measures the table's pages sorted by next fire
// (the page's default order) through the HTTP handler, at the rows given
// at 10k and 100k rows: two rows in three have
// a next fire (scattered over a year), the third has none. first, middle
// and last are pages 1, n/2 and the last in ascending order; first-desc
// is page 1 descending (the idle rows first). p50 and p95 per request:
//
//	go test ./webtable/ -run '^$' -bench TableNextFire -benchtime 200x
func BenchmarkTableNextFire(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			router := benchNextFireTable(b, n)
			cases := []struct {
				name, start, dir string
			}{
				{"first", "0", "asc"},
				{"middle", strconv.Itoa(n / 2), "asc"},
				{"last", strconv.Itoa(n - 25), "asc"},
				{"first-desc", "0", "desc"},
			}
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					q := url.Values{"draw": {"1"}, "length": {"25"}, "start": {c.start},
						"order[0][column]": {"4"}, "order[0][dir]": {c.dir}}
					for i, col := range []string{"fields.memo_id", "fields.title", "fields.content", "fields.when", "next_fire"} {
						q.Set(fmt.Sprintf("columns[%d][data]", i), col)
					}
					target := "/api/v1/scenarios/memos/table?" + q.Encode()
					benchPage(b, router, target)
				})
			}
		})
	}
}

// benchNextFireTable fills a store with n memos, two in three with a next
// fire, and returns the table endpoint over it.
func benchNextFireTable(b *testing.B, n int) http.Handler {
	b.Helper()
	ctx := context.Background()
	st := apitest.OpenStore(b)
	base := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	for i := range n {
		id := fmt.Sprintf("m%07d", (i*7919)%n)
		row := &task.Row{Scenario: "memos", ID: id, IsActive: 1, Fields: map[string]any{"memo_id": id,
			"title": fmt.Sprintf("memo %x", i*2654435761%1000003), "content": "water the plants", "when": "every 1h"}}
		if i%3 != 0 {
			row.NextFire = base.Add(time.Duration((i*104729)%525600) * time.Minute)
		}
		if err := st.InsertRow(ctx, row); err != nil {
			b.Fatal(err)
		}
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
	b.Logf("%s, %d rows: insert %s, prepare %s", apitest.Driver(), n, inserted.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond))
	r := gin.New()
	tbl.Register(r)
	return r
}
