package e2e

import (
	"maps"
	"strings"
	"testing"
)

const zhRows = "/api/v1/scenarios/%E5%80%BC%E7%8F%AD%E6%8F%90%E9%86%92/rows/d1"

// TestApplyCommand runs cronsheet apply against a live node: a dry run
// changes nothing; the first apply creates everything, the second finds
// everything unchanged and writes nothing (versions and audit trail as
// they were); an edited field updates that object alone, and a changed
// secret is sent again without being printed; --prune deletes only the
// objects of the file's set, never a row made by hand.
func TestApplyCommand(t *testing.T) {
	b := setupApply(t)
	all := []string{"target hook", "target gc", "flow nightly", "row memos/standup", "row memos/report", "row 值班提醒/d1"}
	plan := func(action string) []string {
		var out []string
		for _, o := range all {
			out = append(out, action+" "+o)
		}
		return out
	}

	out, errs, code := b.apply(applyFileV1, "--dry-run")
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errs)
	}
	sameLines(t, "dry run", lines(out), plan("create")...)
	if s := b.state(); len(s) != 1 || s["audit"] != 0 {
		t.Fatalf("after the dry run the node has %v; want nothing", s)
	}

	out, errs, code = b.apply(applyFileV1)
	if code != 0 {
		t.Fatalf("first apply: exit %d\n%s%s", code, out, errs)
	}
	sameLines(t, "first apply", lines(out), plan("create")...)
	hook := b.get("/api/v1/targets/hook")
	if h := hook["http"].(map[string]any)["headers"].(map[string]any); h["Authorization"] != "***" {
		t.Errorf("hook headers = %v; want the secret masked", h)
	}
	if l := hook["labels"].(map[string]any); l["managed_by"] != "team-a" || !strings.HasPrefix(l["declared_secrets"].(string), "$2") {
		t.Errorf("hook labels = %v; want managed_by team-a and a bcrypt hash", l)
	}
	row := b.get(zhRows)["fields"].(map[string]any)
	if row["标题"] != "早班" || row["编号"] != "d1" || row["managed_by"] != "team-a" {
		t.Errorf("值班提醒/d1 fields = %v; want 标题 早班, 编号 d1, managed_by team-a", row)
	}
	before := b.state()
	if before["audit"] != 6 {
		t.Errorf("audit records after the first apply = %v; want 6 (one per object)", before["audit"])
	}

	out, errs, code = b.apply(applyFileV1)
	if code != 0 || !strings.Contains(out, "applied: 0 created, 0 updated, 0 deleted, 6 unchanged") {
		t.Fatalf("second apply: exit %d\n%s%s", code, out, errs)
	}
	sameLines(t, "second apply", lines(out), plan("unchanged")...)
	if after := b.state(); !maps.Equal(after, before) {
		t.Errorf("the second apply changed the node: versions and audit %v, before %v", after, before)
	}

	edited := strings.NewReplacer("标题: 早班", "标题: 晚班", "first-secret", "second-secret").Replace(applyFileV1)
	out, errs, code = b.apply(edited)
	if code != 0 {
		t.Fatalf("edited apply: exit %d\n%s%s", code, out, errs)
	}
	sameLines(t, "edited apply", lines(out), "update target hook (secrets)", "unchanged target gc", "unchanged flow nightly",
		"unchanged row memos/standup", "unchanged row memos/report", "update row 值班提醒/d1 (标题)")
	after := b.state()
	for p, v := range before {
		want := v
		switch p {
		case "/api/v1/targets/hook", zhRows:
			want = v + 1
		case "audit":
			want = v + 2
		}
		if after[p] != want {
			t.Errorf("%s after the edit = %v; want %v", p, after[p], want)
		}
	}
	if got := b.get(zhRows)["fields"].(map[string]any)["标题"]; got != "晚班" {
		t.Errorf("标题 after the edit = %v; want 晚班", got)
	}
	if out, _, _ := b.apply(edited); len(lines(out)) != 6 || strings.Contains(strings.Join(lines(out), "\n"), "update") {
		t.Errorf("apply after the edit again:\n%s\nwant everything unchanged (the new secret's hash matches)", out)
	}

	testApplyPrune(t, b, edited)
}

// testApplyPrune drops a memo and the flow from the file: --prune --dry-run
// lists their deletes and changes nothing; --prune deletes them and
// leaves a row made by hand, which carries no marker.
func testApplyPrune(t *testing.T, b *applyBundle, file string) {
	if code := b.send("POST", "/api/v1/scenarios/memos/rows", `{"memo_id":"handmade","content":"mine","when":"daily 07:00"}`); code != 201 {
		t.Fatalf("create a row by hand: %d", code)
	}
	cut := strings.Replace(file, "    report: {content: weekly report, when: weekly fri 17:00, targets: hook}\n", "", 1)
	cut = cut[:strings.Index(cut, "flows:")] + "flows: {}\n" + cut[strings.Index(cut, "rows:"):]
	before := b.state()
	out, errs, code := b.apply(cut, "--prune", "--dry-run")
	if code != 0 {
		t.Fatalf("prune dry run: exit %d\n%s%s", code, out, errs)
	}
	want := []string{"unchanged target hook", "unchanged target gc", "unchanged row memos/standup",
		"unchanged row 值班提醒/d1", "delete row memos/report", "delete flow nightly"}
	sameLines(t, "prune dry run", lines(out), want...)
	if after := b.state(); !maps.Equal(after, before) {
		t.Errorf("the prune dry run changed the node: %v, before %v", after, before)
	}
	out, errs, code = b.apply(cut, "--prune")
	if code != 0 {
		t.Fatalf("prune: exit %d\n%s%s", code, out, errs)
	}
	sameLines(t, "prune", lines(out), want...)
	if b.get("/api/v1/scenarios/memos/rows/report") != nil || b.get("/api/v1/flows/nightly") != nil {
		t.Error("prune left memos/report or flow nightly")
	}
	if b.get("/api/v1/scenarios/memos/rows/handmade") == nil || b.get("/api/v1/targets/hook") == nil {
		t.Error("prune deleted the row made by hand or a declared target")
	}
}

// TestApplyRefusals: a bad file exits 2 naming file:line and the field,
// and touches nothing; a file the node refuses exits 1 naming the object
// and the node's message.
func TestApplyRefusals(t *testing.T) {
	b := setupApply(t)
	bad := strings.Replace(applyFileV1, "keep_age: 86400", "keep_age: a day", 1)
	out, errs, code := b.apply(bad)
	if code != 2 || !strings.Contains(errs, "declared.yaml:13: targets.gc.builtin.keep_age: must be a whole number") {
		t.Errorf("bad file: exit %d\n%s%s\nwant 2 and declared.yaml:13 naming targets.gc.builtin.keep_age", code, out, errs)
	}
	bad = strings.Replace(applyFileV1, "state: running\n    builtin", "state: on\n    builtin", 1)
	if _, errs, code = b.apply(bad); code != 2 || !strings.Contains(errs, "declared.yaml:12: targets.gc.state:") {
		t.Errorf("bad state: exit %d\n%s\nwant 2 and declared.yaml:12 naming targets.gc.state", code, errs)
	}
	bad = strings.Replace(applyFileV1, "targets: hook}", "targets: 'hook, nope'}", 1)
	if _, errs, code = b.apply(bad); code != 2 || !strings.Contains(errs, `declared.yaml:24: rows.memos.report.targets: names "nope"`) {
		t.Errorf("a row naming a missing target: exit %d\n%s\nwant 2 and declared.yaml:24 naming the field and the id", code, errs)
	}
	bad = strings.Replace(applyFileV1, "targets: [gc]", "targets: [gc, none]", 1)
	if _, errs, code = b.apply(bad); code != 2 || !strings.Contains(errs, `declared.yaml:20: flows.nightly.steps[1].targets: names "none"`) {
		t.Errorf("a step naming a missing flow: exit %d\n%s\nwant 2 and declared.yaml:20 naming the step", code, errs)
	}
	if s := b.state(); s["audit"] != 0 {
		t.Errorf("a bad file changed the node: %v", s)
	}
	refused := "name: team-a\ntargets:\n  run-it: {kind: exec, state: running, exec: {command: not-listed}}\n"
	out, errs, code = b.apply(refused)
	if code != 1 || !strings.Contains(errs, "create target run-it: 400 exec.command") {
		t.Errorf("refused target: exit %d\n%s%s\nwant 1 naming the target and exec.command", code, out, errs)
	}
}
