package webtable

import (
	"errors"
	"net/url"
	"testing"
	"time"
	"unicode/utf8"

	"cronsheet/api/httpapi"
	"cronsheet/internal/apitest"
	"cronsheet/mapping"
	"cronsheet/task"
)

// Fuzz targets of the decoders that read what clients send. `make fuzz`
// runs each for a while; under plain `go test` each runs its seeds, so the
// corpus is part of every test run. Every target checks that a refusal is
// an error the API can answer with (a 4xx naming a field), never a panic.

// fuzzNow is the clock of the fuzzed mappings.
var fuzzNow = time.Date(2026, 6, 15, 9, 30, 0, 0, time.UTC)

// fuzzScenarios are the scenarios rows are fuzzed against: memos and one
// keyed in Chinese with param_fields.
func fuzzScenarios(t testing.TB) []*mapping.Scenario {
	duty, err := mapping.New(mapping.Config{
		Name: "值班提醒",
		Fields: map[string]string{
			mapping.FieldTaskID: "编号", mapping.FieldTitle: "标题", mapping.FieldTaskPara: "内容",
			mapping.FieldCronPara: "时间", mapping.FieldTaskType: "方式", mapping.FieldTo: "接收人",
			mapping.FieldParams: "参数", mapping.FieldActive: "启用",
		},
		ParamFields: []string{"班次"},
	})
	if err != nil {
		t.Fatal(err)
	}
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	return []*mapping.Scenario{memos, duty}
}

// FuzzRowJSON: a row body as POST .../rows reads it, then the checks and
// the mapping createRow and the sync patrol run on it.
func FuzzRowJSON(f *testing.F) {
	for _, s := range []string{
		`{"title":"stand-up","content":"Stand up","when":"every 2s","channel":"outbox"}`,
		`{"memo_id":"m1","content":"c","when":"daily 08:30 tz Asia/Shanghai","channel":"email","to":"a@example.com","active":1}`,
		`{"content":"c","when":"每天早上8点","params":"day=mon; 班次=早班","targets":"hook, other"}`,
		`{"content":"c","when":"in 5m","params":"{\"day\": \"tue\", \"n\": 2}","start":"2026-06-15 10:00","end":"2027-01-01T00:00:00Z"}`,
		`{"内容":"八点交接","时间":"weekdays 09:00","接收人":"x","班次":"夜班","参数":"k=v","启用":"true"}`,
		`{"content":"c","when":"monthly last 18:00","alert":"a1","alert_after":3,"alert_absent":"10m","ttl":1e3}`,
		`{"content":"c","when":"every 1h","retries":1.5,"timeout":-1,"active":2,"misfire":"x","overlap":"queue"}`,
		`{"a":{"b":1}}`, `[1,2]`, `{"x":1} {}`, `{"when":"\u0000"}`, ``, `{"memo_id":"../x"}`,
	} {
		f.Add([]byte(s))
	}
	scenarios := fuzzScenarios(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		fields, err := httpapi.ReadObject(apitest.FuzzContext(body))
		apitest.CheckClientError(t, "readObject", err)
		if err != nil {
			return
		}
		for _, sc := range scenarios {
			f := make(map[string]any, len(fields))
			for k, v := range fields {
				f[k] = v
			}
			id, err := sc.AssignID(f)
			apitest.CheckClientError(t, "AssignID", err)
			if err != nil {
				continue
			}
			if err := sc.ValidateFields(f); err != nil {
				apitest.CheckClientError(t, "ValidateFields", err)
				continue
			}
			isActive(sc, f)
			tk, err := sc.ToTask(&task.Row{Scenario: sc.Name(), ID: id, Fields: f}, fuzzNow)
			if err != nil {
				if !errors.Is(err, task.ErrInvalid) {
					t.Fatalf("ToTask: %v is not a validation error", err)
				}
				continue
			}
			if tk.TaskID == "" || tk.CronPara == "" || task.ValidParams("params", tk.Params) != nil {
				t.Fatalf("ToTask accepted %q into %+v", body, tk)
			}
			if _, err := mapping.Schedule(tk); err != nil {
				t.Fatalf("the mapped schedule %q does not parse again: %v", tk.CronPara, err)
			}
		}
	})
}

// FuzzImportCSV: a CSV import's parse and line checks (the part that runs
// before anything is written), for memos and a scenario keyed in Chinese.
func FuzzImportCSV(f *testing.F) {
	for _, s := range []string{
		"memo_id,title,content,when,channel\nm1,t,c,every 1h,outbox\nm2,\"a, b\",\"say \"\"hi\"\"\",daily 08:00,outbox\n",
		"\uFEFFcontent,when,params\nc,每小时,day=mon; 班次=早班\n",
		"content,when,is_active,next_fire,error\nc,every 1h,1,2026-01-01,x\n",
		"编号,内容,时间,班次\nr1,八点交接,weekdays 09:00,夜班\n",
		"content,when\n\"open,every 1h\n", "content,when\na,b,c\n", "content,content\n", ",\n", "", "_version\n1\n",
		"memo id,when\nm,every 1h\n", "content,when\n'=1+1,every 1h\n", "content,when\n\xb2\xe2\xca\xd4,every 1h\n",
	} {
		f.Add([]byte(s))
	}
	scenarios := fuzzScenarios(f)
	a := &API{Base: httpapi.NewBase("webtable", nil, nil, func() time.Time { return fuzzNow })}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxImportBytes {
			return
		}
		for _, sc := range scenarios {
			rows, lines, status, msg := a.parseImport(sc, data)
			if msg != "" {
				if status < 400 || status >= 500 || rows != nil {
					t.Fatalf("refused import: status %d, %d rows", status, len(rows))
				}
				for _, l := range lines {
					if l.Error == "" || l.Line < 0 || !utf8.ValidString(l.Field) || !utf8.ValidString(l.Error) {
						t.Fatalf("line error %+v", l)
					}
				}
				continue
			}
			if len(rows) == 0 || len(rows) > maxImportLines {
				t.Fatalf("accepted import with %d rows", len(rows))
			}
			for _, r := range rows {
				if r.row.ID == "" || r.line < 2 || sc.ValidateFields(r.row.Fields) != nil {
					t.Fatalf("accepted row %+v on line %d", r.row, r.line)
				}
			}
		}
	})
}

// FuzzDataTablesQuery: the table endpoint's request decoder (GET query or
// POST form), over the memos and 值班提醒 columns.
func FuzzDataTablesQuery(f *testing.F) {
	for _, s := range []string{
		"draw=1&start=0&length=10&columns[0][data]=fields.memo_id&columns[1][data]=fields.title&order[0][column]=1&order[0][dir]=desc",
		"draw=3&start=20&length=50&search[value]=%E6%8F%90%E9%86%92&columns[0][data]=fields.memo_id&order[0][column]=0&order[0][dir]=asc",
		"draw=1&start=0&length=-1&columns[0][data]=next_fire&order[0][column]=0",
		"draw=x&start=9999999999&length=501", "columns[0][data]=fields.nope&order[0][column]=7", "order[0][dir]=sideways",
		"search[value]=ab&columns[64][data]=x", "%zz", "draw=1&draw=2",
	} {
		f.Add(s)
	}
	scenarios := fuzzScenarios(f)
	f.Fuzz(func(t *testing.T, query string) {
		form, err := url.ParseQuery(query)
		if err != nil {
			return // the router refuses it before the decoder
		}
		for _, sc := range scenarios {
			req, err := parseTableRequest(form, Columns(sc))
			if err != nil {
				if err.Error() == "" { // serve answers it 400 with this message
					t.Fatalf("parseTableRequest(%q): an error without a message", query)
				}
				continue
			}
			q := req.query
			if q.Limit < 1 || q.Offset < 0 || len(q.Search) > 256 || req.draw < 0 {
				t.Fatalf("accepted %q as %+v", query, req)
			}
		}
	})
}
