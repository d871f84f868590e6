package patrol_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"cronsheet/mapping"
	"cronsheet/patrol"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// editDuringSync is the real store, with one user edit landing between the
// sync patrol's ListUnfetchedRows and its ApplySync, as a concurrent API edit
// would.
type editDuringSync struct {
	*sqlite.Store
	edit func(ctx context.Context)
}

var _ patrol.SyncStore = (*editDuringSync)(nil)

func (s *editDuringSync) ListUnfetchedRows(ctx context.Context, limit int) ([]*task.Row, error) {
	rows, err := s.Store.ListUnfetchedRows(ctx, limit)
	if s.edit != nil {
		s.edit(ctx)
		s.edit = nil
	}
	return rows, err
}

func TestSync(t *testing.T) {
	t.Parallel()

	t.Run("ValidRowUpsertsTask", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.insertRow(t, scenario, "r1", memo("m1"))

		if res := b.runSync(t, b.sync); res != (patrol.SyncResult{Synced: 1}) {
			t.Fatalf("sync = %+v, want 1 synced", res)
		}
		checkRowState(t, b.row(t, scenario, "r1"), 1, task.RowActive)
		got := b.task(t, "m1")
		if got.Version != 1 {
			t.Errorf("version = %d, want 1", got.Version)
		}
		got.Version, got.CreatedAt, got.UpdatedAt = 0, time.Time{}, time.Time{}
		want := &task.Task{
			TaskID: "m1", Scenario: scenario, RowID: "r1",
			TaskType: task.ChannelEmail, TaskPara: "Stand-up in 5 minutes.",
			Params:      map[string]string{task.ParamTitle: "Stand-up", task.ParamTo: "team@example.com"},
			ExecuteType: task.Periodic, CronPara: "daily 08:30", TZ: "UTC",
			TTL: task.DefaultTTL, MaxRetries: task.DefaultRetries, Misfire: task.MisfireOnce,
			State: task.StateRunning, Anchor: mapping.Anchor(start), IsEnable: 1,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("task =\n%+v\nwant\n%+v", got, want)
		}
		if res := b.runSync(t, b.sync); res != (patrol.SyncResult{}) {
			t.Errorf("second sync = %+v, want nothing to do", res)
		}
	})

	t.Run("InactiveRowDisablesTask", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		fields := memo("m1")
		fields["active"] = 0
		b.insertRow(t, scenario, "r1", fields)

		if res := b.runSync(t, b.sync); res != (patrol.SyncResult{Synced: 1}) {
			t.Fatalf("sync = %+v, want 1 synced", res)
		}
		checkRowState(t, b.row(t, scenario, "r1"), 1, task.RowInactive)
		if tk := b.task(t, "m1"); tk.IsEnable != 0 {
			t.Errorf("task is_enable = %d, want 0", tk.IsEnable)
		}
	})

	t.Run("InvalidWhenMarksRowAndDisablesTask", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 1)
		bad := memo("m1")
		bad["when"] = "dayly 8:00"
		b.editRow(t, "r1", bad)
		fresh := memo("m2")
		fresh["when"] = "dayly 8:00"
		b.insertRow(t, scenario, "r2", fresh)

		if res := b.runSync(t, b.sync); res != (patrol.SyncResult{Invalid: 2}) {
			t.Fatalf("sync = %+v, want 2 invalid", res)
		}
		for _, id := range []string{"r1", "r2"} {
			row := b.row(t, scenario, id)
			checkRowState(t, row, 1, task.RowError)
			if !strings.HasPrefix(row.Error, "when: ") || !strings.Contains(row.Error, `"dayly 8:00"`) {
				t.Errorf("row %s error = %q, want it to name when and quote the text", id, row.Error)
			}
		}
		old := b.task(t, "m1")
		if old.IsEnable != 0 || old.CronPara != "daily 08:30" {
			t.Errorf("task m1: is_enable=%d cron_para=%q, want the old schedule, disabled", old.IsEnable, old.CronPara)
		}
		b.noTask(t, "m2")
	})

	t.Run("UnknownScenarioMarksRow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.insertRow(t, "nosuch", "r1", memo("m1"))

		if res := b.runSync(t, b.sync); res != (patrol.SyncResult{Invalid: 1}) {
			t.Fatalf("sync = %+v, want 1 invalid", res)
		}
		row := b.row(t, "nosuch", "r1")
		checkRowState(t, row, 1, task.RowError)
		if want := `scenario: unknown scenario "nosuch"`; row.Error != want {
			t.Errorf("row error = %q, want %q", row.Error, want)
		}
		b.noTask(t, "m1")
	})

	t.Run("ContentEditKeepsAnchorAndClaim", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 1)
		b.runPublish(t, b.publish)
		before := b.task(t, "m1")

		b.clock.Advance(10 * time.Minute)
		fields := memo("m1")
		fields["content"] = "Stand-up moved to room 2."
		b.editRow(t, "r1", fields)
		if res := b.runSync(t, b.sync); res != (patrol.SyncResult{Synced: 1}) {
			t.Fatalf("sync = %+v, want 1 synced", res)
		}
		after := b.task(t, "m1")
		if after.TaskPara != "Stand-up moved to room 2." {
			t.Errorf("task_para = %q, want the edit", after.TaskPara)
		}
		if !after.Anchor.Equal(before.Anchor) {
			t.Errorf("anchor = %s, want it kept at %s", after.Anchor, before.Anchor)
		}
		if after.IsClaimed != 1 || after.ClaimedBy != nodeA {
			t.Errorf("claim = %d by %q, want kept by %s", after.IsClaimed, after.ClaimedBy, nodeA)
		}
		if after.Version != before.Version+1 {
			t.Errorf("version = %d, want %d", after.Version, before.Version+1)
		}
	})

	t.Run("ScheduleEditNewAnchorAndResetsClaim", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 1)
		b.runPublish(t, b.publish)

		b.clock.Advance(10 * time.Minute)
		fields := memo("m1")
		fields["when"] = "every 30m"
		b.editRow(t, "r1", fields)
		if res := b.runSync(t, b.sync); res != (patrol.SyncResult{Synced: 1}) {
			t.Fatalf("sync = %+v, want 1 synced", res)
		}
		after := b.task(t, "m1")
		if want := mapping.Anchor(b.clock.Now()); !after.Anchor.Equal(want) {
			t.Errorf("anchor = %s, want %s (the edit)", after.Anchor, want)
		}
		if after.CronPara != "every 30m" || after.IsClaimed != 0 || after.ClaimedBy != "" {
			t.Errorf("task: cron_para=%q claimed=%d by %q, want every 30m, unclaimed",
				after.CronPara, after.IsClaimed, after.ClaimedBy)
		}
	})

	t.Run("ReEnableGetsNewAnchor", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 1)
		first := b.task(t, "m1").Anchor

		b.clock.Advance(time.Hour)
		off := memo("m1")
		off["active"] = 0
		b.editRow(t, "r1", off)
		b.runSync(t, b.sync)
		if tk := b.task(t, "m1"); tk.IsEnable != 0 || !tk.Anchor.Equal(first) {
			t.Errorf("disabled task: is_enable=%d anchor=%s, want 0 and the first anchor %s", tk.IsEnable, tk.Anchor, first)
		}

		b.clock.Advance(3 * 24 * time.Hour) // slots missed while off
		b.editRow(t, "r1", memo("m1"))
		if res := b.runSync(t, b.sync); res != (patrol.SyncResult{Synced: 1}) {
			t.Fatalf("sync = %+v, want 1 synced", res)
		}
		tk := b.task(t, "m1")
		if want := mapping.Anchor(b.clock.Now()); tk.IsEnable != 1 || !tk.Anchor.Equal(want) {
			t.Errorf("re-enabled task: is_enable=%d anchor=%s, want 1 and %s (the re-enable)", tk.IsEnable, tk.Anchor, want)
		}
		checkRowState(t, b.row(t, scenario, "r1"), 1, task.RowActive)
	})

	t.Run("RowEditedDuringPassIsConflict", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 1)
		b.runPublish(t, b.publish)
		edited := memo("m1")
		edited["content"] = "B"
		b.editRow(t, "r1", edited)
		bad := memo("m2")
		bad["when"] = "dayly 8:00"
		b.insertRow(t, scenario, "r2", bad)

		final := memo("m1")
		final["content"] = "C"
		fixed := memo("m2")
		st := &editDuringSync{Store: b.store, edit: func(ctx context.Context) {
			for id, fields := range map[string]map[string]any{"r1": final, "r2": fixed} {
				if _, err := b.store.UpdateRowFields(ctx, store.UpdateRowParams{Scenario: scenario, ID: id, Fields: fields}); err != nil {
					t.Errorf("edit row %s during the pass: %v", id, err)
				}
			}
		}}
		s := patrol.NewSync(b.logger, st, b.mappers, 0, b.clock.Now)
		if res := b.runSync(t, s); res != (patrol.SyncResult{Conflicts: 2}) {
			t.Fatalf("sync = %+v, want 2 conflicts", res)
		}
		for _, id := range []string{"r1", "r2"} {
			if row := b.row(t, scenario, id); row.IsFetched != 0 || row.IsActive == task.RowError {
				t.Errorf("row %s after the conflict: is_fetched=%d is_active=%d error=%q, want left for the next pass",
					id, row.IsFetched, row.IsActive, row.Error)
			}
		}
		if tk := b.task(t, "m1"); tk.TaskPara != "Stand-up in 5 minutes." || tk.IsEnable != 1 || tk.IsClaimed != 1 {
			t.Errorf("task m1 after the conflict: task_para=%q is_enable=%d is_claimed=%d, want untouched",
				tk.TaskPara, tk.IsEnable, tk.IsClaimed)
		}
		b.noTask(t, "m2")

		if res := b.runSync(t, s); res != (patrol.SyncResult{Synced: 2}) {
			t.Fatalf("next sync = %+v, want 2 synced", res)
		}
		if tk := b.task(t, "m1"); tk.TaskPara != "C" {
			t.Errorf("task m1 task_para = %q, want the latest edit C", tk.TaskPara)
		}
		b.task(t, "m2")
		for _, id := range []string{"r1", "r2"} {
			checkRowState(t, b.row(t, scenario, id), 1, task.RowActive)
		}
	})

	t.Run("TaskIDOfAnotherRow", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 2) // r1 → m1, r2 → m2
		b.editRow(t, "r2", memo("m1"))

		if res := b.runSync(t, b.sync); res != (patrol.SyncResult{Invalid: 1}) {
			t.Fatalf("sync = %+v, want 1 invalid", res)
		}
		row := b.row(t, scenario, "r2")
		checkRowState(t, row, 1, task.RowError)
		if !strings.HasPrefix(row.Error, "memo_id: ") || !strings.Contains(row.Error, `"m1"`) ||
			!strings.Contains(row.Error, "another row") {
			t.Errorf("row error = %q, want it to name memo_id, the id and the clash", row.Error)
		}
		if tk := b.task(t, "m1"); tk.RowID != "r1" || tk.IsEnable != 1 {
			t.Errorf("task m1: row %q is_enable=%d, want r1's, still enabled", tk.RowID, tk.IsEnable)
		}
		if tk := b.task(t, "m2"); tk.IsEnable != 0 {
			t.Errorf("r2's old task m2: is_enable=%d, want disabled", tk.IsEnable)
		}
		checkRowState(t, b.row(t, scenario, "r1"), 1, task.RowActive)
	})

	t.Run("BatchBoundsPass", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for i := 1; i <= 5; i++ {
			b.insertRow(t, scenario, fmt.Sprintf("r%d", i), memo(fmt.Sprintf("m%d", i)))
		}
		s := b.newSync(2)
		for i, want := range []int{2, 2, 1, 0} {
			if res := b.runSync(t, s); res != (patrol.SyncResult{Synced: want}) {
				t.Fatalf("pass %d: sync = %+v, want %d synced", i+1, res, want)
			}
		}
		for i := 1; i <= 5; i++ {
			checkRowState(t, b.row(t, scenario, fmt.Sprintf("r%d", i)), 1, task.RowActive)
			b.task(t, fmt.Sprintf("m%d", i))
		}
	})
}

// racingStore lets another node sync every row first: its ApplySync stores
// the verdict through the real store, then answers as the loser of the
// race does on a store without transactions (a plain task.ErrConflict).
type racingStore struct {
	patrol.SyncStore
}

func (s racingStore) ApplySync(ctx context.Context, p store.ApplySyncParams) error {
	if err := s.SyncStore.ApplySync(ctx, p); err != nil {
		return err
	}
	return fmt.Errorf("%w: task %s changed while it was synced", task.ErrConflict, p.RowID)
}

// TestSyncRaceLoserNeverFlagsRow: the node that loses a sync race counts a
// conflict and leaves the row as the winner synced it, never in error.
func TestSyncRaceLoserNeverFlagsRow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.insertRow(t, scenario, "r1", memo("m1"))
	sync := patrol.NewSync(b.logger, racingStore{b.store}, b.mappers, 0, b.clock.Now)
	res, err := sync.RunOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res != (patrol.SyncResult{Conflicts: 1}) {
		t.Errorf("sync = %+v, want 1 conflict", res)
	}
	row := b.row(t, scenario, "r1")
	checkRowState(t, row, 1, task.RowActive)
	if row.Error != "" {
		t.Errorf("row error = %q, want none", row.Error)
	}
	if tk := b.task(t, "m1"); tk.IsEnable != 1 {
		t.Errorf("task is_enable = %d, want 1", tk.IsEnable)
	}
}
