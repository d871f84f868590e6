package server

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/task"
)

// dutyYAML declares a scenario named and keyed in Chinese, with labels.
const dutyYAML = `
scenarios:
  - name: 值班提醒
    tz: Asia/Shanghai
    id_field: 编号
    fields:
      task_id: 编号
      title: 标题
      task_para: 内容
      cron_para: 时间
      task_type: 方式
      to: 接收人
    defaults:
      方式: email
    labels:
      标题: {en: Title, zh: 标题}
      内容: {en: Message, zh: 内容}
      时间: {en: When, zh: 时间}
      方式: {en: Channel, zh: 方式}
      接收人: {en: Recipient, zh: 接收人}
`

func TestLoadConfigUnicodeScenario(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(writeConfig(t, dutyYAML), noEnv)
	if err != nil {
		t.Fatalf("config with scenario 值班提醒: %v", err)
	}
	var names []string
	for _, sc := range cfg.ScenarioConfigs() {
		names = append(names, sc.Name)
	}
	if !slices.Equal(names, []string{"memos", "值班提醒"}) {
		t.Errorf("scenarios = %q, want memos kept beside 值班提醒", names)
	}
	if got := cfg.Scenarios[0].Labels["接收人"]; got["en"] != "Recipient" || got["zh"] != "接收人" {
		t.Errorf("labels of 接收人 = %v", got)
	}
	// A scenario declared as memos replaces the shipped one.
	cfg.Scenarios[0].Name = "memos"
	if got := cfg.ScenarioConfigs(); len(got) != 1 || got[0].IDField != "编号" {
		t.Errorf("a declared memos scenario: %+v, want it alone", got)
	}
	for body, want := range map[string]string{
		strings.Replace(dutyYAML, "标题: {en: Title", "备注: {en: Note", 1): "labels.备注: not a mapped row field",
		strings.Replace(dutyYAML, "title: 标题", "title: 标-题", 1):         `fields.title: row field "标-题" must be`,
	} {
		if _, err := config.Load(writeConfig(t, body), noEnv); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadConfig = %v, want an error containing %q", err, want)
		}
	}
}

// TestUnicodeScenarioServes: a node whose config declares 值班提醒 serves
// its rows beside memos; a row keyed in Chinese syncs, arms and delivers
// (to the real SMTP server), the table sorts by a Chinese field, and the
// column model carries the configured labels.
func TestUnicodeScenarioServes(t *testing.T) {
	loaded, err := config.Load(writeConfig(t, dutyYAML), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, func(c *config.Config) { c.Scenarios = loaded.Scenarios })
	base := "/api/v1/scenarios/" + url.PathEscape("值班提醒")

	var row task.Row
	code := b.call(t, "POST", base+"/rows", map[string]any{
		"标题": "交接班", "内容": "八点交接，请签到。", "时间": "every 1s", "接收人": "duty@example.com",
	}, &row)
	if code != http.StatusCreated || row.ID == "" || row.Fields["编号"] != row.ID {
		t.Fatalf("create row: status %d, row %+v", code, row)
	}
	msgs := b.smtp.WaitFor(1, 15*time.Second)
	if len(msgs) < 1 || msgs[0].Subject != "交接班" || !strings.Contains(msgs[0].Body, "八点交接") ||
		!slices.Equal(msgs[0].To, []string{"duty@example.com"}) {
		t.Fatalf("messages = %+v, want the row's reminder", msgs)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got task.Row
		if code := b.call(t, "GET", base+"/rows/"+row.ID, nil, &got); code != http.StatusOK {
			t.Fatalf("get row: status %d", code)
		}
		if got.IsFetched == 1 && got.IsActive == task.RowActive && !got.NextFire.IsZero() && got.LastStatus == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("row not synced, armed and fired in 10s: %+v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var tk task.Task
	if code := b.call(t, "GET", "/api/v1/tasks/"+row.ID, nil, &tk); code != http.StatusOK ||
		tk.Scenario != "值班提醒" || tk.TZ != "Asia/Shanghai" || tk.TaskType != task.ChannelEmail {
		t.Errorf("task: status %d, %+v", code, tk)
	}

	// The column model carries the labels; the English one is the title.
	var cols struct {
		IDField string `json:"id_field"`
		Columns []struct {
			Data   string            `json:"data"`
			Field  string            `json:"field"`
			Role   string            `json:"role"`
			Title  string            `json:"title"`
			Labels map[string]string `json:"labels"`
		} `json:"columns"`
	}
	if code := b.call(t, "GET", base+"/columns", nil, &cols); code != http.StatusOK || cols.IDField != "编号" {
		t.Fatalf("columns: status %d, %+v", code, cols)
	}
	titleCol := -1
	for i, c := range cols.Columns {
		if c.Field == "标题" {
			titleCol = i
			if c.Data != "fields.标题" || c.Role != "title" || c.Title != "Title" || c.Labels["zh"] != "标题" || c.Labels["en"] != "Title" {
				t.Errorf("标题 column = %+v", c)
			}
		}
		if c.Field == "编号" && (c.Title != "编号" || c.Labels != nil) {
			t.Errorf("编号 column (no labels) = %+v, want its name as title", c)
		}
	}
	if titleCol < 0 {
		t.Fatalf("no 标题 column in %+v", cols.Columns)
	}

	// The table serves the row, sorted by the Chinese field, and searched.
	q := url.Values{"draw": {"1"}, "start": {"0"}, "length": {"10"}, "search[value]": {"交接班"},
		"order[0][column]": {"1"}, "order[0][dir]": {"asc"}}
	for i, c := range cols.Columns {
		q.Set("columns["+strconv.Itoa(i)+"][data]", c.Data)
	}
	var page struct {
		RecordsTotal int64 `json:"recordsTotal"`
		Data         []struct {
			ID     string         `json:"id"`
			Fields map[string]any `json:"fields"`
		} `json:"data"`
	}
	q.Set("order[0][column]", strconv.Itoa(titleCol))
	if code := b.call(t, "GET", base+"/table?"+q.Encode(), nil, &page); code != http.StatusOK ||
		page.RecordsTotal != 1 || len(page.Data) != 1 || page.Data[0].Fields["标题"] != "交接班" {
		t.Errorf("table: status %d, %+v", code, page)
	}

	// memos is still served beside it.
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
		"title": "t", "content": "c", "when": "daily 08:00",
	}, nil); code != http.StatusCreated {
		t.Errorf("create memos row: status %d, want 201 (memos must stay)", code)
	}
}
