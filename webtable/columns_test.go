package webtable_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/internal/apitest"
	"cronsheet/mapping"
	"cronsheet/webtable"
)

// 排班 maps its fields in Chinese, with labels, and names two fields of its
// own as param fields (备注 labelled, 星期 not).
func paibanConfig() mapping.Config {
	return mapping.Config{
		Name: "排班", IDField: "编号",
		Fields: map[string]string{mapping.FieldTaskID: "编号", mapping.FieldTitle: "标题", mapping.FieldTaskPara: "内容",
			mapping.FieldCronPara: "时间", mapping.FieldExecuteType: "重复", mapping.FieldTargets: "目标",
			mapping.FieldMaxRetries: "重试", mapping.FieldTZ: "时区"},
		Labels: map[string]map[string]string{
			"重复": {"en": "Repeat", "zh": "重复"}, "目标": {"en": "Targets", "zh": "目标"},
			"重试": {"en": "Retries", "zh": "重试次数"}, "备注": {"en": "Note", "zh": "备注"},
		},
		ParamFields: []string{"星期", "备注"},
	}
}

// columnsOf serves GET .../columns of scenario from a table over memos
// and 排班, and decodes its columns.
func columnsOf(t *testing.T, scenario string) []webtable.Column {
	t.Helper()
	scs := map[string]*mapping.Scenario{}
	for _, cfg := range []mapping.Config{mapping.MemosConfig(), paibanConfig()} {
		sc, err := mapping.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		scs[cfg.Name] = sc
	}
	tbl := webtable.NewTable(webtable.TableDeps{Store: apitest.OpenStore(t), Scenarios: scs})
	if err := tbl.Prepare(context.Background()); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	r := gin.New()
	tbl.Register(r)
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/scenarios/"+url.PathEscape(scenario)+"/columns", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var body struct {
		Columns []webtable.Column `json:"columns"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	return body.Columns
}

// describe writes columns as field:type:role[:hidden][=options], the
// bookkeeping ones by their data key.
func describe(cols []webtable.Column) string {
	var out []string
	for _, c := range cols {
		s := c.Data + ":" + c.Type + ":" + c.Role
		if c.Hidden {
			s += ":hidden"
		}
		if len(c.Options) > 0 {
			s += "=" + strings.Join(c.Options, "/")
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestColumnsEveryMappedField: memos' columns hold every field it maps,
// each with the editor its values need, the less used ones hidden.
func TestColumnsEveryMappedField(t *testing.T) {
	t.Parallel()
	got := describe(columnsOf(t, "memos"))
	want := "fields.memo_id:id:task_id fields.title:text:title fields.content:text:task_para fields.when:schedule:cron_para " +
		"fields.channel:enum:task_type=email/sms/outbox fields.to:text:to fields.active:switch:active " +
		"is_active:status:is_active next_fire:time:next_fire last_fire:time:last_fire last_status:text:last_status " +
		"fields.repeat:enum:execute_type=once/periodic/until_success fields.targets:targets:targets " +
		"fields.tz:zone:tz:hidden fields.start:datetime:start_time:hidden fields.end:datetime:end_time:hidden " +
		"fields.timeout:number:ttl:hidden fields.retries:number:max_retries:hidden " +
		"fields.misfire:enum:misfire:hidden=skip/once/all fields.overlap:enum:overlap:hidden=allow/skip/queue " +
		"fields.params:params:params:hidden fields.alert:targets:alert:hidden fields.alert_to:text:alert_to:hidden " +
		"fields.alert_after:number:alert_after:hidden fields.alert_absent:text:alert_absent:hidden"
	if got != want {
		t.Errorf("memos columns =\n%s\nwant\n%s", got, want)
	}
}

// TestColumnsChineseMapping: a scenario mapping Chinese field names gets
// a column per mapped field and per field of its own, titled by its
// labels.
func TestColumnsChineseMapping(t *testing.T) {
	t.Parallel()
	cols := columnsOf(t, "排班")
	got := describe(cols)
	want := "fields.编号:id:task_id fields.标题:text:title fields.内容:text:task_para fields.时间:schedule:cron_para " +
		"is_active:status:is_active next_fire:time:next_fire last_fire:time:last_fire last_status:text:last_status " +
		"fields.重复:enum:execute_type=once/periodic/until_success fields.目标:targets:targets " +
		"fields.时区:zone:tz:hidden fields.重试:number:max_retries:hidden " +
		"fields.星期:text:星期:hidden fields.备注:text:备注:hidden"
	if got != want {
		t.Errorf("排班 columns =\n%s\nwant\n%s", got, want)
	}
	titles := map[string]string{}
	for _, c := range cols {
		if c.Field != "" {
			titles[c.Field] = c.Title + "/" + c.Labels["zh"]
		}
	}
	for f, want := range map[string]string{"重复": "Repeat/重复", "目标": "Targets/目标", "重试": "Retries/重试次数", "备注": "Note/备注", "星期": "星期/"} {
		if titles[f] != want {
			t.Errorf("column %s titled %q, want %q", f, titles[f], want)
		}
	}
}
