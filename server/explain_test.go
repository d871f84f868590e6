package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/explain/report"
	"cronsheet/store"
	"cronsheet/task"
)

// explainTask calls GET /api/v1/tasks/{id}/explain, with at when it is
// not zero, and wants 200.
func (b *testBundle) explainTask(t *testing.T, id string, at time.Time) report.Answer {
	t.Helper()
	path := "/api/v1/tasks/" + url.PathEscape(id) + "/explain"
	if !at.IsZero() {
		path += "?at=" + url.QueryEscape(at.Format(time.RFC3339Nano))
	}
	var a report.Answer
	if code := b.call(t, "GET", path, nil, &a); code != http.StatusOK {
		t.Fatalf("explain %s: status %d", id, code)
	}
	return a
}

// wantAnswer checks an answer's verdict, deciding rule and sentences:
// the sentence names the slot in UTC (the memos scenario's zone) and the
// deciding check's detail.
func wantAnswer(t *testing.T, a report.Answer, verdict report.Verdict, rule, detail, detailZH string) {
	t.Helper()
	when := a.Slot.UTC().Format("2006-01-02 15:04:05") + " UTC"
	var en, zh string
	switch verdict {
	case report.WillNotFire:
		en, zh = fmt.Sprintf("It will not fire at %s: %s.", when, detail), fmt.Sprintf("它不会在 %s 触发：%s。", when, detailZH)
	case report.DidNotFire:
		en, zh = fmt.Sprintf("It did not fire at %s: %s.", when, detail), fmt.Sprintf("它没有在 %s 触发：%s。", when, detailZH)
	case report.WillFire:
		en, zh = fmt.Sprintf("It will fire at %s: every check passes.", when), fmt.Sprintf("它将在 %s 触发：各项检查均通过。", when)
	case report.Fired:
		en, zh = fmt.Sprintf("It fired at %s: %s.", when, detail), fmt.Sprintf("它已于 %s 触发：%s。", when, detailZH)
	}
	if a.Verdict != verdict || a.Rule != rule || a.Sentence != en || a.SentenceZH != zh {
		t.Errorf("answer = %s / %s: %q / %q\nwant %s / %s: %q / %q\nchecks: %+v",
			a.Verdict, a.Rule, a.Sentence, a.SentenceZH, verdict, rule, en, zh, a.Checks)
	}
	rules := make([]string, 0, len(a.Checks))
	for _, c := range a.Checks {
		if len(rules) == 0 || rules[len(rules)-1] != c.Rule {
			rules = append(rules, c.Rule)
		}
	}
	want := []string{report.RuleRow, report.RuleTaskState, report.RuleWindow, report.RuleSchedule, report.RuleTarget,
		report.RuleAdmission, report.RuleHealth, report.RuleOverlap, report.RuleMisfire, report.RuleClaim, report.RuleLedger}
	if strings.Join(rules, ",") != strings.Join(want, ",") {
		t.Errorf("checks in order %v, want %v", rules, want)
	}
}

// addRow creates a memos row and waits for its task to be synced.
func (b *testBundle) addRow(t *testing.T, fields map[string]any) *task.Task {
	t.Helper()
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", fields, nil); code != http.StatusCreated {
		t.Fatalf("create row %v: status %d", fields, code)
	}
	id := fields["memo_id"].(string)
	b.waitRow(t, id, 10*time.Second, func(r *task.Row) bool { return r.IsFetched == 1 })
	return waitTask(t, b, id, func(*task.Task) bool { return true })
}

// addTarget stores a target directly (the API would refuse a denied host).
func (b *testBundle) addTarget(t *testing.T, id string, state task.TargetState, rawURL string) {
	t.Helper()
	tg := &task.Target{ID: id, Kind: task.ChannelHTTP, State: state, HTTP: &task.HTTPTarget{Method: "POST", URL: rawURL}}
	if err := b.srv.store.CreateTarget(t.Context(), tg); err != nil {
		t.Fatalf("create target %s: %v", id, err)
	}
}

// TestExplainRules: one case per rule that stops a fire, through the API
// of a running node, each with its verdict and sentence in English and
// Chinese; a fired slot and one that will fire; and the refusals.
func TestExplainRules(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // holds every delivery, so the next slot overlaps
	}))
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.HTTP.Deny = []string{"blocked.example.com"}
		c.Flow.HostRate, c.Flow.HostBurst = 5, 2
	})
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) }) // before the node stops
	later := time.Now().Add(25 * time.Hour)
	daily := func(id string, extra map[string]any) *task.Task {
		f := map[string]any{"memo_id": id, "content": "x", "when": "daily 03:00", "channel": "outbox"}
		for k, v := range extra {
			f[k] = v
		}
		return b.addRow(t, f)
	}

	t.Run("SwitchedOff", func(t *testing.T) {
		daily("off", map[string]any{"active": 0})
		wantAnswer(t, b.explainTask(t, "off", later), report.WillNotFire, report.RuleRow, "the row is switched off", "该行已关闭")
	})
	t.Run("StoppedTask", func(t *testing.T) {
		daily("stopped", nil)
		if code := b.call(t, "PUT", "/api/v1/tasks/stopped/state", map[string]any{"state": "stopped"}, nil); code != 200 {
			t.Fatalf("stop: status %d", code)
		}
		wantAnswer(t, b.explainTask(t, "stopped", later), report.WillNotFire, report.RuleTaskState,
			"the task is stopped: it fires only by hand", "任务已停止：只能手动触发")
	})
	t.Run("PausedTarget", func(t *testing.T) {
		b.addTarget(t, "paused", task.TargetPaused, "http://user:s3cret@127.0.0.1:9/x?key=k3y")
		daily("paused-row", map[string]any{"targets": "paused"})
		a := b.explainTask(t, "paused-row", later)
		wantAnswer(t, a, report.WillNotFire, report.RuleTarget,
			"target paused is paused: it accepts manual triggers only", "目标 paused 已暂停：只接受手动触发")
		if ad := a.Checks[5]; ad.Rule != report.RuleAdmission || ad.Verdict != report.Pass ||
			ad.Detail != "host 127.0.0.1 is allowed, limited to 5 requests/s (burst 2): a busy host delays, never drops" {
			t.Errorf("admission check = %+v, want the host's rate limit", ad)
		}
		var raw strings.Builder
		for _, c := range a.Checks {
			fmt.Fprintf(&raw, "%v %s %s", c.Data, c.Detail, c.DetailZH)
		}
		if s := raw.String(); strings.Contains(s, "s3cret") || strings.Contains(s, "k3y") {
			t.Errorf("the answer shows a target secret: %s", s)
		}
	})
	t.Run("PresetTarget", func(t *testing.T) {
		b.addTarget(t, "preset", task.TargetPreset, "http://127.0.0.1:9/x")
		daily("preset-row", map[string]any{"targets": "preset"})
		wantAnswer(t, b.explainTask(t, "preset-row", later), report.WillNotFire, report.RuleTarget,
			"target preset is preset: it accepts no trigger yet", "目标 preset 处于预置状态：尚不接受任何触发")
	})
	t.Run("OutsideWindow", func(t *testing.T) {
		start := time.Now().Add(7 * 24 * time.Hour).UTC().Truncate(time.Minute)
		daily("window", map[string]any{"start": start.Format(time.RFC3339)})
		when := start.Format("2006-01-02 15:04:05") + " UTC"
		wantAnswer(t, b.explainTask(t, "window", later), report.WillNotFire, report.RuleWindow,
			"the slot is before the start time "+when, "该时刻早于开始时间 "+when)
	})
	t.Run("FailingTarget", func(t *testing.T) {
		b.addTarget(t, "failing", task.TargetRunning, "http://127.0.0.1:9/x")
		daily("failing-row", map[string]any{"targets": "failing"})
		last := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
		if err := b.srv.store.RecordTargetOutcomes(t.Context(), []store.TargetOutcome{
			{Target: "failing", Failure: last, Error: "HTTP 500", Failures: 3}}); err != nil {
			t.Fatal(err)
		}
		a := b.explainTask(t, "failing-row", later)
		when := a.Slot.UTC().Format("2006-01-02 15:04:05") + " UTC"
		en := "It will fire at " + when + ", but target failing failed its last 3 deliveries (last at 2026-12-04 10:00:00 UTC: HTTP 500)."
		zh := "它将在 " + when + " 触发，但目标 failing 最近 3 次发送均失败（最近一次在 2026-12-04 10:00:00 UTC：HTTP 500）。"
		if a.Verdict != report.WillFire || a.Rule != report.RuleHealth || a.Sentence != en || a.SentenceZH != zh {
			t.Errorf("answer = %s / %s: %q / %q\nwant will_fire / health: %q / %q", a.Verdict, a.Rule, a.Sentence, a.SentenceZH, en, zh)
		}
	})
	t.Run("DeniedHost", func(t *testing.T) {
		b.addTarget(t, "denied", task.TargetRunning, "http://blocked.example.com/x")
		daily("denied-row", map[string]any{"targets": "denied"})
		why := `http.url: callback host blocked.example.com refused: it matches deny entry "blocked.example.com" in the live settings' deny list`
		wantAnswer(t, b.explainTask(t, "denied-row", later), report.WillNotFire, report.RuleAdmission,
			"target denied is refused by this node's configuration: "+why, "目标 denied 被本节点的配置拒绝："+why)
	})
	t.Run("OverlapSkip", func(t *testing.T) {
		b.addTarget(t, "slow", task.TargetRunning, slow.URL+"/hold")
		b.addRow(t, map[string]any{"memo_id": "busy", "content": "x", "when": "every 1s", "targets": "slow", "overlap": "skip"})
		var skipped *task.Run
		eventually(t, "a slot skipped for overlap", func() bool {
			for _, r := range b.runs(t, "busy") {
				if r.State == task.RunSkipped {
					skipped = r
					return true
				}
			}
			return false
		})
		wantAnswer(t, b.explainTask(t, "busy", skipped.Slot), report.DidNotFire, report.RuleOverlap,
			"the previous run was still in progress (overlap: skip)", "上一次运行仍在进行中（overlap: skip）")
	})
	t.Run("Fired", func(t *testing.T) {
		b.addRow(t, map[string]any{"memo_id": "ok", "content": "x", "when": "every 1s", "channel": "outbox"})
		var done *task.Run
		eventually(t, "a run done", func() bool {
			for _, r := range b.runs(t, "ok") {
				if r.State == task.RunDone {
					done = r
					return true
				}
			}
			return false
		})
		wantAnswer(t, b.explainTask(t, "ok", done.Slot), report.Fired, report.RuleLedger,
			"run "+done.TriggerID+" to outbox is done", "运行 "+done.TriggerID+"（发往 outbox）状态为 done")
	})
	t.Run("WillFire", func(t *testing.T) {
		daily("later", nil)
		waitTask(t, b, "later", func(tk *task.Task) bool { return tk.IsClaimed == 1 || !tk.ArmAt.IsZero() })
		wantAnswer(t, b.explainTask(t, "later", time.Time{}), report.WillFire, "", "", "")
	})
	t.Run("Refusals", func(t *testing.T) {
		job := &task.Task{TaskID: "job_1", Scenario: task.JobScenario, TaskType: "http", ExecuteType: task.Once, TTL: time.Minute,
			State: task.StateRunning, IsEnable: 0, Anchor: time.Now(), Targets: []string{task.JobTargetID},
			Job: &task.Job{Method: task.JobPOST, Name: "http://127.0.0.1:9/hook", DueAt: time.Now().Add(time.Hour)}}
		if err := b.srv.store.CreateJob(t.Context(), job); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		for _, tt := range []struct {
			path   string
			status int
			want   string
		}{
			{"/api/v1/tasks/nope/explain", 404, `task "nope" not found`},
			{"/api/v1/tasks/later/explain?at=tomorrow", 400, `"field":"at"`},
			{"/api/v1/tasks/job_1/explain", 409, "is a job; change it through the jobs API"},
		} {
			var body map[string]any
			code := b.call(t, "GET", tt.path, nil, &body)
			raw := fmt.Sprint(body)
			if tt.status == 400 {
				raw = fmt.Sprintf(`"field":%q`, body["field"])
			}
			if code != tt.status || !strings.Contains(raw, tt.want) {
				t.Errorf("GET %s = %d %v; want %d with %s", tt.path, code, body, tt.status, tt.want)
			}
		}
	})
}

// TestExplainMissedSlots: a task another node holds (one that is gone,
// its lease still running) misses its slots: a past slot did not fire
// (misfire: skip drops it), and the next will not (no running node holds
// it).
func TestExplainMissedSlots(t *testing.T) {
	b := setup(t, nil)
	b.addRow(t, map[string]any{"memo_id": "gone", "content": "x", "when": "every 1s", "channel": "outbox", "misfire": "skip"})
	eventually(t, "the task held by node gone-node", func() bool {
		tk, err := b.srv.store.GetTask(t.Context(), "gone")
		if err != nil {
			t.Fatal(err)
		}
		if tk.ClaimedBy == "gone-node" {
			return true
		}
		if tk.IsClaimed == 1 {
			_ = b.srv.store.ReleaseTask(t.Context(), "gone", tk.ClaimedBy)
		}
		if _, err := b.srv.store.ClaimTasks(t.Context(), store.ClaimParams{Owner: "gone-node",
			LeaseUntil: time.Now().Add(time.Hour), Limit: 1, ArmBy: time.Now()}); err != nil {
			t.Fatal(err)
		}
		return false // read it again
	})
	held := time.Now()
	// A slot after the node lost the task, once it has passed.
	missed := b.explainTask(t, "gone", held.Add(1500*time.Millisecond)).Slot
	eventually(t, "the slot to pass", func() bool { return time.Now().After(missed.Add(time.Second)) })
	t.Run("MisfireSkip", func(t *testing.T) {
		wantAnswer(t, b.explainTask(t, "gone", missed), report.DidNotFire, report.RuleMisfire,
			"the slot was missed while no node held the task, and misfire: skip drops missed slots",
			"该时刻在无节点持有任务时错过，而 misfire: skip 会丢弃错过的时刻")
	})
	t.Run("NoClaim", func(t *testing.T) {
		a := b.explainTask(t, "gone", time.Now().Add(time.Hour))
		tk, err := b.srv.store.GetTask(t.Context(), "gone")
		if err != nil {
			t.Fatal(err)
		}
		lease := tk.LeaseUntil.UTC().Format("2006-01-02 15:04:05") + " UTC"
		wantAnswer(t, a, report.WillNotFire, report.RuleClaim,
			"node gone-node holds the task but is not running (its lease runs until "+lease+"; another node takes over after)",
			"节点 gone-node 持有该任务但未在运行（租约至 "+lease+"；之后由其他节点接管）")
	})
}
