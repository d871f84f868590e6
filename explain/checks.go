package explain

import (
	"context"
	"errors"
	"fmt"

	"cronsheet/explain/report"
	"cronsheet/task"
)

// checkRow: the row is switched on (is_active 1), synced (is_fetched 1)
// and without error, and the task it maps to is enabled.
func (e *Explainer) checkRow(ctx context.Context, c *kase) error {
	t := c.t
	data := map[string]any{"is_enable": t.IsEnable}
	if t.RowID == "" {
		if t.IsEnable != 1 {
			c.add(report.RuleRow, report.Fail, say("the task is disabled", "任务已禁用"), data)
		} else {
			c.add(report.RuleRow, report.Info, say("the task has no row; it is enabled", "任务没有对应的行；已启用"), data)
		}
		return nil
	}
	data["scenario"], data["row_id"] = t.Scenario, t.RowID
	row, err := e.d.Store.GetRow(ctx, t.Scenario, t.RowID)
	if errors.Is(err, task.ErrNotFound) {
		c.add(report.RuleRow, report.Fail, say("the row is deleted", "该行已删除"), data)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read row %s: %w", t.RowID, err)
	}
	data["is_active"], data["is_fetched"] = row.IsActive, row.IsFetched
	if row.Error != "" {
		data["error"] = row.Error
	}
	switch {
	case row.IsActive == task.RowInactive:
		c.add(report.RuleRow, report.Fail, say("the row is switched off", "该行已关闭"), data)
	case row.IsActive == task.RowError:
		c.add(report.RuleRow, report.Fail, say("the row is in error: %s", "该行有错误：%s", row.Error), data)
	case t.IsEnable != 1:
		c.add(report.RuleRow, report.Fail, say("the task is disabled", "任务已禁用"), data)
	case row.IsFetched != 1:
		c.add(report.RuleRow, report.Info, say("the row's latest edit is not synced yet: the task still follows the edit before it",
			"该行最近的修改尚未同步：任务仍按之前的内容执行"), data)
	default:
		c.add(report.RuleRow, report.Pass, say("the row is switched on and synced", "该行已开启并已同步"), data)
	}
	return nil
}

// checkState: the task is running (task.Admit decides) and not done.
func (e *Explainer) checkState(_ context.Context, c *kase) error {
	t := c.t
	data := map[string]any{"state": t.State, "is_done": t.IsDone}
	why := task.Admit(t.State, task.TargetRunning, task.TriggerSchedule)
	switch {
	case why != "" && t.State == task.StateStopped:
		c.add(report.RuleTaskState, report.Fail, say("the task is stopped: it fires only by hand", "任务已停止：只能手动触发"), data)
	case why != "" && t.State == task.StateClosed:
		c.add(report.RuleTaskState, report.Fail, say("the task is closed", "任务已关闭"), data)
	case why != "":
		c.add(report.RuleTaskState, report.Fail, say("%s", "%s", why), data)
	case t.IsDone == 1 && len(c.records) == 0:
		c.add(report.RuleTaskState, report.Fail, say("the task is done: its schedule has no slot left",
			"任务已完成：日程没有剩余的时刻"), data)
	default:
		c.add(report.RuleTaskState, report.Pass, say("the task is running", "任务正在运行"), data)
	}
	return nil
}

// checkWindow: the slot lies inside the start/end window and after the
// schedule became active (its anchor), as fire.Slots requires.
func (e *Explainer) checkWindow(_ context.Context, c *kase) error {
	t := c.t
	data := map[string]any{"anchor": t.Anchor}
	if !t.StartTime.IsZero() {
		data["start"] = t.StartTime
	}
	if !t.EndTime.IsZero() {
		data["end"] = t.EndTime
	}
	slot := c.slot
	floor := t.Anchor
	if t.Job != nil && t.CronPara == "" {
		floor = slot.Add(-1) // a delayed job's due time always counts
	}
	switch {
	case slot.IsZero():
		c.add(report.RuleWindow, report.Info, say("no slot to check", "没有可检查的时刻"), data)
	case !t.StartTime.IsZero() && slot.Before(t.StartTime):
		c.add(report.RuleWindow, report.Fail, say("the slot is before the start time %s", "该时刻早于开始时间 %s",
			c.when(t.StartTime)), data)
	case !t.EndTime.IsZero() && slot.After(t.EndTime):
		c.add(report.RuleWindow, report.Fail, say("the slot is after the end time %s", "该时刻晚于结束时间 %s",
			c.when(t.EndTime)), data)
	case t.StartTime.IsZero() && !slot.After(floor):
		c.add(report.RuleWindow, report.Fail, say("the slot is before the schedule became active at %s",
			"该时刻早于日程生效时间 %s", c.when(t.Anchor)), data)
	default:
		c.add(report.RuleWindow, report.Pass, say("the slot lies inside the task's window", "该时刻在任务的时间范围内"), data)
	}
	return nil
}

// checkSchedule: the schedule parses and names a slot; the slot in the
// task's zone.
func (e *Explainer) checkSchedule(_ context.Context, c *kase) error {
	data := map[string]any{"when": c.t.CronPara, "tz": c.loc.String()}
	switch {
	case c.schedErr != nil:
		c.add(report.RuleSchedule, report.Fail, say("the schedule cannot be read: %v", "无法解析日程：%v", c.schedErr), data)
	case len(c.records) > 0 && !c.records[0].TriggerType.Scheduled():
		data["slot"] = c.slot
		c.add(report.RuleSchedule, report.Info, say("the slot is the instant of a %s trigger, not one of the schedule's",
			"该时刻是一次 %s 触发的时刻，不是日程的时刻", c.records[0].TriggerType), data)
	case c.slot.IsZero():
		c.add(report.RuleSchedule, report.Fail, say("the schedule has no slot at or after %s", "日程在 %s 及之后没有时刻",
			c.when(c.at)), data)
	default:
		data["slot"], data["slot_local"] = c.slot, c.slot.In(c.loc).Format("2006-01-02T15:04:05-07:00")
		c.add(report.RuleSchedule, report.Pass, say("%q in %s gives the slot %s", "%q（时区 %s）得出时刻 %s",
			c.t.CronPara, c.loc.String(), c.when(c.slot)), data)
	}
	return nil
}
