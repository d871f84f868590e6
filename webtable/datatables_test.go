package webtable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/internal/apitest"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
	"cronsheet/webtable"
)

const tablePath = "/api/v1/scenarios/memos/table"

// tableBundle is the table endpoint over a fresh SQLite file holding 25
// memos, m00..m24.
type tableBundle struct {
	router http.Handler
	store  store.Product
}

func setupTable(t *testing.T) *tableBundle {
	t.Helper()
	ctx := context.Background()
	st := apitest.OpenStore(t)
	for i := range 25 {
		fields := map[string]any{"memo_id": fmt.Sprintf("m%02d", i), "title": fmt.Sprintf("memo %c", 'a'+rune(i)),
			"content": "water the plants", "when": "every 1h", "channel": "outbox"}
		if i%10 == 7 {
			fields["content"] = "feed the zebra"
		}
		if err := st.InsertRow(ctx, &task.Row{Scenario: "memos", ID: fmt.Sprintf("m%02d", i), IsActive: 1, Fields: fields}); err != nil {
			t.Fatal(err)
		}
	}
	return &tableBundle{router: memosTable(t, st), store: st}
}

// memosTable is the table endpoint of the memos scenario over st, prepared.
func memosTable(t *testing.T, st webtable.TableStore) http.Handler {
	t.Helper()
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	tbl := webtable.NewTable(webtable.TableDeps{Store: st, Scenarios: map[string]*mapping.Scenario{"memos": memos}})
	if err := tbl.Prepare(context.Background()); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	r := gin.New()
	tbl.Register(r)
	return r
}

// columnsQuery is what DataTables sends for the memos columns.
func columnsQuery(t *testing.T, b *tableBundle) url.Values {
	t.Helper()
	rec := httptest.NewRecorder()
	b.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/scenarios/memos/columns", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("columns: %d %s", rec.Code, rec.Body)
	}
	var body struct {
		Columns []webtable.Column `json:"columns"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	v := url.Values{}
	for i, c := range body.Columns {
		v.Set(fmt.Sprintf("columns[%d][data]", i), c.Data)
	}
	return v
}

type tableAnswer struct {
	Draw            int        `json:"draw"`
	RecordsTotal    int64      `json:"recordsTotal"`
	RecordsFiltered int64      `json:"recordsFiltered"`
	Data            []task.Row `json:"data"`
	Error           *string    `json:"error"`
	Code            string     `json:"code"`
}

func (b *tableBundle) get(t *testing.T, q url.Values, method string) (int, tableAnswer) {
	t.Helper()
	rec := httptest.NewRecorder()
	var req *http.Request
	if method == http.MethodPost {
		req = httptest.NewRequest(method, tablePath, strings.NewReader(q.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, tablePath+"?"+q.Encode(), nil)
	}
	b.router.ServeHTTP(rec, req)
	var a tableAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatalf("answer %q: %v", rec.Body, err)
	}
	return rec.Code, a
}

func ids(rows []task.Row) string {
	var out []string
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return strings.Join(out, ",")
}

func TestTableProtocol(t *testing.T) {
	t.Parallel()
	b := setupTable(t)
	base := columnsQuery(t, b)
	with := func(kv ...string) url.Values {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	tests := []struct {
		name       string
		q          url.Values
		method     string
		wantIDs    string
		wantTotal  int64
		wantFilter int64
	}{
		{"FirstPage", with("draw", "1", "start", "0", "length", "3"), "GET", "m00,m01,m02", 25, 25},
		{"DeepPage", with("draw", "2", "start", "23", "length", "10"), "GET", "m23,m24", 25, 25},
		{"PastTheEnd", with("draw", "2", "start", "100", "length", "10"), "GET", "", 25, 25},
		{"SortTitleDesc", with("draw", "3", "length", "2", "order[0][column]", "1", "order[0][dir]", "desc"), "GET", "m24,m23", 25, 25},
		{"SortIDDesc", with("draw", "3", "length", "2", "order[0][column]", "0", "order[0][dir]", "desc"), "GET", "m24,m23", 25, 25},
		{"Search", with("draw", "4", "length", "10", "search[value]", "ZEBRA"), "GET", "m07,m17", 25, 2},
		{"SearchPost", with("draw", "4", "length", "10", "search[value]", "zebra"), "POST", "m07,m17", 25, 2},
		{"LengthAllIsCapped", with("draw", "5", "length", "-1"), "GET", "", 25, 25},
		{"InjectionQuote", with("draw", "6", "length", "10", "search[value]", `x' OR '1'='1`), "GET", "", 25, 0},
		{"InjectionDrop", with("draw", "6", "length", "10", "search[value]", `'; DROP TABLE rows; --`), "GET", "", 25, 0},
		{"InjectionFTS", with("draw", "6", "length", "10", "search[value]", `zebra" OR "water`), "GET", "", 25, 0},
		{"InjectionFTSStar", with("draw", "6", "length", "10", "search[value]", `zeb*`), "GET", "", 25, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, a := b.get(t, tt.q, tt.method)
			if code != http.StatusOK || a.Error != nil {
				t.Fatalf("status %d, error %v", code, a.Error)
			}
			if want, _ := atoi(tt.q.Get("draw")); a.Draw != want {
				t.Errorf("draw = %d, want %d", a.Draw, want)
			}
			if a.RecordsTotal != tt.wantTotal || a.RecordsFiltered != tt.wantFilter {
				t.Errorf("total, filtered = %d, %d; want %d, %d", a.RecordsTotal, a.RecordsFiltered, tt.wantTotal, tt.wantFilter)
			}
			if tt.name == "LengthAllIsCapped" {
				if len(a.Data) != 25 {
					t.Errorf("rows = %d, want 25", len(a.Data))
				}
				return
			}
			if got := ids(a.Data); got != tt.wantIDs {
				t.Errorf("ids = %q, want %q", got, tt.wantIDs)
			}
		})
	}
	// The table still has every row after the injection attempts.
	if _, a := b.get(t, with("draw", "9"), "GET"); a.RecordsTotal != 25 {
		t.Errorf("after injections: total %d", a.RecordsTotal)
	}
}

func atoi(s string) (int, error) {
	var n int
	_, err := fmt.Sscan(s, &n)
	return n, err
}

func TestTableBadRequests(t *testing.T) {
	t.Parallel()
	b := setupTable(t)
	base := columnsQuery(t, b)
	tests := []struct {
		name     string
		kv       []string
		wantDraw int
		wantErr  string
	}{
		{"DrawNotANumber", []string{"draw", "abc"}, 0, "draw: must be an integer"},
		{"DrawNegative", []string{"draw", "-1"}, 0, "draw: must be an integer"},
		{"StartNegative", []string{"draw", "3", "start", "-5"}, 3, "start: must be an integer"},
		{"StartHuge", []string{"draw", "3", "start", "99999999999999999999"}, 3, "start: must be an integer"},
		{"LengthZero", []string{"draw", "3", "length", "0"}, 3, "length: must be -1"},
		{"LengthBelowMinusOne", []string{"draw", "3", "length", "-2"}, 3, "length: must be an integer"},
		{"LengthFloat", []string{"draw", "3", "length", "1.5"}, 3, "length: must be an integer"},
		{"OrderColumnOutOfRange", []string{"draw", "3", "order[0][column]", "99"}, 3, "order[0][column]: must be a column index"},
		{"OrderColumnNotANumber", []string{"draw", "3", "order[0][column]", "title"}, 3, "order[0][column]"},
		{"OrderColumnInjection", []string{"draw", "3", "order[0][column]", "1; DROP TABLE rows"}, 3, "order[0][column]"},
		{"OrderDirBad", []string{"draw", "3", "order[0][column]", "1", "order[0][dir]", "desc; DROP TABLE rows"}, 3, "order[0][dir]: must be asc or desc"},
		{"OrderNotSortable", []string{"draw", "3", "order[0][column]", "2"}, 3, "not sortable"},
		{"OrderMulti", []string{"draw", "3", "order[0][column]", "1", "order[1][column]", "3"}, 3, "more than one column"},
		{"UnknownColumn", []string{"draw", "3", "columns[1][data]", "fields.secret"}, 3, `unknown column "fields.secret"`},
		{"ColumnInjection", []string{"draw", "3", "columns[1][data]", "fields.title') --"}, 3, "unknown column"},
		{"SearchTooShort", []string{"draw", "3", "search[value]", "ab"}, 3, "at least 3 characters"},
		{"FilterStateUnknown", []string{"draw", "3", "filter[state]", "maybe"}, 3, "filter[state]: must be error, off, failing or due"},
		{"FilterChannelUnknown", []string{"draw", "3", "filter[channel]", "fax"}, 3, `filter[channel]: "fax" is not a channel`},
		{"SearchNUL", []string{"draw", "3", "search[value]", "abc\x00def"}, 3, "search: contains a control character"},
		{"SearchOnlyNUL", []string{"draw", "3", "search[value]", "\x00\x00\x00"}, 3, "search: contains a control character"},
		{"SearchEscape", []string{"draw", "3", "search[value]", "abc\x1bdef"}, 3, "search: contains a control character"},
		{"SearchTooLong", []string{"draw", "3", "search[value]", strings.Repeat("x", 300)}, 3, "search: longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := url.Values{}
			for k, vs := range base {
				v[k] = vs
			}
			for i := 0; i < len(tt.kv); i += 2 {
				v.Set(tt.kv[i], tt.kv[i+1])
			}
			code, a := b.get(t, v, http.MethodGet)
			if code != http.StatusBadRequest {
				t.Errorf("status = %d, want 400", code)
			}
			if a.Error == nil || !strings.Contains(*a.Error, tt.wantErr) {
				t.Errorf("error = %v, want it to contain %q", a.Error, tt.wantErr)
			}
			if a.Draw != tt.wantDraw {
				t.Errorf("draw = %d, want %d", a.Draw, tt.wantDraw)
			}
			if a.Code != string(task.CodeInvalidField) && a.Code != string(task.CodeInvalidRequest) {
				t.Errorf("code = %q, want %s or %s (the stable code of every error body)", a.Code, task.CodeInvalidField, task.CodeInvalidRequest)
			}
		})
	}
	t.Run("UnknownScenario", func(t *testing.T) {
		rec := httptest.NewRecorder()
		b.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/scenarios/nope/table?draw=1", nil))
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `"error"`) ||
			!strings.Contains(rec.Body.String(), `"code":"`+string(task.CodeNotFound)+`"`) {
			t.Errorf("got %d %s", rec.Code, rec.Body)
		}
	})
}

func TestColumnsOfMemos(t *testing.T) {
	t.Parallel()
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range webtable.Columns(memos) {
		got = append(got, fmt.Sprintf("%s:%s:%v", c.Data, c.Type, c.Editable))
	}
	want := "fields.memo_id:id:false fields.title:text:true fields.content:text:true fields.when:schedule:true " +
		"fields.channel:enum:true fields.to:text:true fields.active:switch:true is_active:status:false " +
		"next_fire:time:false last_fire:time:false last_status:text:false fields.repeat:enum:true " +
		"fields.targets:targets:true fields.tz:zone:true fields.start:datetime:true fields.end:datetime:true " +
		"fields.timeout:number:true fields.retries:number:true fields.misfire:enum:true fields.overlap:enum:true " +
		"fields.params:params:true fields.alert:targets:true fields.alert_to:text:true fields.alert_after:number:true " +
		"fields.alert_absent:text:true"
	if strings.Join(got, " ") != want {
		t.Errorf("columns =\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

func TestTableExportCSV(t *testing.T) {
	t.Parallel()
	b := setupTable(t)
	ctx := context.Background()
	if err := b.store.InsertRow(ctx, &task.Row{Scenario: "memos", ID: "zz", IsActive: 1,
		Fields: map[string]any{"memo_id": "zz", "title": "=HYPERLINK(\"x\")", "content": "zebra, \"quoted\"\nline"}}); err != nil {
		t.Fatal(err)
	}
	q := url.Values{"search[value]": {"zebra"}, "order[0][column]": {"0"}, "order[0][dir]": {"desc"},
		"columns[0][data]": {"fields.memo_id"}, "columns[1][data]": {"fields.title"}, "columns[2][data]": {"fields.content"},
		"columns[3][data]": {"is_active"}, "start": {"5"}, "length": {"1"}}
	rec := httptest.NewRecorder()
	b.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/scenarios/memos/table.csv?"+q.Encode(), nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") {
		t.Fatalf("%d %s %s", rec.Code, rec.Header(), rec.Body)
	}
	// Every field the scenario maps and the status columns, whatever
	// columns the view shows; the view's search and order choose the rows.
	want := "\uFEFFmemo_id,title,content,tz,when,repeat,channel,to,active,start,end,timeout,retries,misfire,overlap," +
		"targets,alert,alert_to,alert_after,alert_absent,params,is_active,next_fire,last_fire,last_status,error\n" +
		"zz,\"'=HYPERLINK(\"\"x\"\")\",\"zebra, \"\"quoted\"\"\nline\",,,,,,,,,,,,,,,,,,,1,,,,\n" +
		"m17,memo r,feed the zebra,,every 1h,,outbox,,,,,,,,,,,,,,,1,,,,\n" +
		"m07,memo h,feed the zebra,,every 1h,,outbox,,,,,,,,,,,,,,,1,,,,\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("csv =\n%s\nwant\n%s", got, want)
	}
	q.Set("order[0][dir]", "sideways")
	rec = httptest.NewRecorder()
	b.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/scenarios/memos/table.csv?"+q.Encode(), nil))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("bad order: %d", rec.Code)
	}
}

// TestColumnsNameTheFields: the column model maps each canonical field the
// scenario maps to its row field, those without a column included.
func TestColumnsNameTheFields(t *testing.T) {
	t.Parallel()
	b := setupTable(t)
	rec := httptest.NewRecorder()
	b.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/scenarios/memos/columns", nil))
	var body struct {
		Fields map[string]string `json:"fields"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("columns: %d %v", rec.Code, err)
	}
	for canon, field := range map[string]string{"task_id": "memo_id", "targets": "targets", "alert": "alert", "cron_para": "when"} {
		if body.Fields[canon] != field {
			t.Errorf("fields[%s] = %q; want %q (all: %v)", canon, body.Fields[canon], field, body.Fields)
		}
	}
}
