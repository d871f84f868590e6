package webtable_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/mapping"
	"cronsheet/webtable"
)

// dutyConfig is a scenario keyed in Chinese that maps every canonical
// field.
func dutyConfig() mapping.Config {
	return mapping.Config{
		Name: "值班提醒",
		Fields: map[string]string{
			mapping.FieldTaskID: "编号", mapping.FieldTitle: "标题", mapping.FieldTaskPara: "内容",
			mapping.FieldCronPara: "时间", mapping.FieldExecuteType: "重复", mapping.FieldTaskType: "方式",
			mapping.FieldTo: "接收人", mapping.FieldActive: "启用", mapping.FieldStartTime: "开始",
			mapping.FieldEndTime: "结束", mapping.FieldTTL: "超时", mapping.FieldMaxRetries: "重试",
			mapping.FieldTZ: "时区", mapping.FieldMisfire: "错过", mapping.FieldOverlap: "重叠",
			mapping.FieldTargets: "目标", mapping.FieldAlert: "告警", mapping.FieldAlertTo: "告警接收人",
			mapping.FieldAlertAfter: "告警次数", mapping.FieldAlertAbsent: "告警缺席", mapping.FieldParams: "参数",
		},
		Labels:      map[string]map[string]string{"标题": {"en": "Title", "zh": "标题"}},
		ParamFields: []string{"班次"},
	}
}

// backupAPI is the whole API over a fresh store of the test driver with
// the memos scenario and dutyConfig's.
func backupAPI(t *testing.T) http.Handler {
	t.Helper()
	scenarios := map[string]*mapping.Scenario{}
	for _, cfg := range []mapping.Config{mapping.MemosConfig(), dutyConfig()} {
		sc, err := mapping.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		scenarios[cfg.Name] = sc
	}
	logger := slog.New(slog.NewJSONHandler(&apitest.SyncBuffer{}, nil))
	st := apitest.OpenStore(t)
	r := gin.New()
	r.Use(httpapi.Middleware(logger)...)
	fullapi.Mount(r, fullapi.Deps{Logger: logger, Store: st, Scenarios: scenarios,
		Wake: func() {}, Now: func() time.Time { return apitest.FixedNow }})
	tbl := webtable.NewTable(webtable.TableDeps{Logger: logger, Store: st, Scenarios: scenarios})
	if err := tbl.Prepare(context.Background()); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	tbl.Register(r)
	return r
}

func doBackup(t *testing.T, h http.Handler, method, path, body string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// backupFields is GET .../rows/{id}'s fields, numbers as json.Number.
func backupFields(t *testing.T, h http.Handler, base, id string) map[string]any {
	t.Helper()
	rec := doBackup(t, h, http.MethodGet, base+"/rows/"+url.PathEscape(id), "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET row %s: %d %s", id, rec.Code, rec.Body)
	}
	var row struct {
		Fields map[string]any `json:"fields"`
	}
	dec := json.NewDecoder(rec.Body)
	dec.UseNumber()
	if err := dec.Decode(&row); err != nil {
		t.Fatal(err)
	}
	return row.Fields
}

// TestCSVBackupRestoresEveryField: rows created through the API with
// every mapped field and extra fields of every kind (text, numbers,
// true/false, empty text; Chinese names and values; text that looks like
// a formula, a number or a literal), exported as CSV, deleted and
// imported again, come back with the same fields, value and type, in the
// memos scenario and in one keyed in Chinese.
func TestCSVBackupRestoresEveryField(t *testing.T) {
	t.Parallel()
	h := backupAPI(t)
	for _, target := range []string{`{"id":"hook1","kind":"email"}`, `{"id":"ops","kind":"email"}`} {
		if rec := doBackup(t, h, http.MethodPost, "/api/v1/targets", target); rec.Code != http.StatusCreated {
			t.Fatalf("create target: %d %s", rec.Code, rec.Body)
		}
	}
	cases := map[string][]string{
		"memos": {
			`{"memo_id":"full","title":"值班 =SUM(A1)","content":"交接班\n第二行, \"引号\"","when":"weekdays 09:00",
			  "repeat":"until_success","channel":"email","to":"ann@example.com","active":true,
			  "start":"2026-06-15 10:00","end":"2027-01-01T00:00:00Z","timeout":30,"retries":5,"tz":"Asia/Shanghai",
			  "misfire":"all","overlap":"queue","targets":"hook1","alert":"ops","alert_to":"ops@example.com",
			  "alert_after":3,"alert_absent":"10m","params":"day=mon; 班次=早班",
			  "备注":"自定义 ü","priority":2.5,"urgent":false,"blank":"","code":"=5","quote":"'007","numtext":"42","big":12345678901234567890}`,
			`{"memo_id":"lean","content":"x","when":"every 1h","active":"0","retries":"2","alert":"ops","alert_absent":600}`,
		},
		"值班提醒": {
			`{"编号":"d1","标题":"夜班交接","内容":"八点交接，检查日志","时间":"daily 08:00","重复":"periodic",
			  "方式":"sms","接收人":"+8613800138000","启用":1,"开始":"2026-06-15 10:00","结束":"2027-06-15 10:00",
			  "超时":60,"重试":0,"时区":"Asia/Shanghai","错过":"skip","重叠":"allow","目标":"hook1, ops",
			  "告警":"ops","告警接收人":"+8613900139000","告警次数":2,"告警缺席":"5m",
			  "参数":"{\"day\":\"周一\",\"n\":2}","班次":"夜班","负责人":"张三","级别":-1}`,
			`{"编号":"d2","内容":"周报","时间":"weekly mon 10:00","启用":"true"}`,
		},
	}
	for name, bodies := range cases {
		base := "/api/v1/scenarios/" + url.PathEscape(name)
		originals := map[string]map[string]any{}
		var ids []string
		for _, body := range bodies {
			rec := doBackup(t, h, http.MethodPost, base+"/rows", body)
			if rec.Code != http.StatusCreated {
				t.Fatalf("%s: create row: %d %s", name, rec.Code, rec.Body)
			}
			var created struct {
				ID    string `json:"id"`
				Error string `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || created.ID == "" || created.Error != "" {
				t.Fatalf("%s: create row: %s (%v), want a row without error", name, rec.Body, err)
			}
			ids = append(ids, created.ID)
			originals[created.ID] = backupFields(t, h, base, created.ID)
		}

		// The page sends its visible columns; the export writes every field.
		title := map[string]string{"memos": "title", "值班提醒": "标题"}[name]
		rec := doBackup(t, h, http.MethodGet, base+"/table.csv?"+url.Values{"columns[0][data]": {"fields." + title}}.Encode(), "")
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: export: %d %s", name, rec.Code, rec.Body)
		}
		exported := rec.Body.String()
		body, bom := strings.CutPrefix(exported, "\uFEFF")
		if !bom {
			t.Errorf("%s: the export has no UTF-8 byte order mark (a spreadsheet would misread its Chinese)", name)
		}
		header, err := csv.NewReader(strings.NewReader(body)).Read()
		if err != nil {
			t.Fatalf("%s: export header: %v\n%s", name, err, exported)
		}
		t.Logf("%s: header %v", name, header)
		for id, fields := range originals {
			for k := range fields {
				if !slices.Contains(header, k) {
					t.Errorf("%s: the export has no column %q (held by row %s)", name, k, id)
				}
			}
		}

		for _, id := range ids {
			if rec := doBackup(t, h, http.MethodDelete, base+"/rows/"+url.PathEscape(id), ""); rec.Code >= 300 {
				t.Fatalf("%s: delete %s: %d %s", name, id, rec.Code, rec.Body)
			}
		}
		rec = doBackup(t, h, http.MethodPost, base+"/import", exported, "Content-Type", "text/csv")
		if rec.Code != http.StatusCreated {
			t.Fatalf("%s: import: %d %s\n%s", name, rec.Code, rec.Body, exported)
		}
		for _, id := range ids {
			want, got := originals[id], backupFields(t, h, base, id)
			for k, v := range want {
				gv, ok := got[k]
				if !ok {
					t.Errorf("%s: row %s lost field %s (%#v) in the round trip", name, id, k, v)
				} else if !reflect.DeepEqual(gv, v) {
					t.Errorf("%s: row %s field %s = %#v after the round trip, want %#v", name, id, k, gv, v)
				}
			}
			for k, v := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: row %s gained field %s = %#v in the round trip", name, id, k, v)
				}
			}
		}
	}
}
