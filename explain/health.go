package explain

import (
	"context"
	"fmt"

	"cronsheet/explain/report"
	"cronsheet/task"
)

// checkHealth: for each target of the task, how its last deliveries (and
// its probe) ended. Health never stops a fire, so each line is
// information; a target whose last deliveries failed makes a slot that
// will fire say so.
func (e *Explainer) checkHealth(ctx context.Context, c *kase) error {
	t := c.t
	if len(t.Targets) == 0 {
		c.add(report.RuleHealth, report.Info, say("no target health: it delivers through its own channel %s",
			"无目标健康信息：通过自身渠道 %s 发送", t.TaskType), map[string]any{"channel": t.TaskType})
		return nil
	}
	health, err := e.d.Store.TargetHealth(ctx, t.Targets)
	if err != nil {
		return fmt.Errorf("read the health of the targets of %s: %w", t.TaskID, err)
	}
	for _, id := range t.Targets {
		h, ok := health[id]
		data := map[string]any{"target": id}
		if !ok {
			c.add(report.RuleHealth, report.Info, say("target %s has no delivery recorded yet",
				"目标 %s 尚无发送记录", id), data)
			continue
		}
		data["failures_in_a_row"] = h.FailuresInARow
		if !h.LastSuccess.IsZero() {
			data["last_success"] = h.LastSuccess
		}
		if !h.LastFailure.IsZero() {
			data["last_failure"], data["last_error"] = h.LastFailure, h.LastError
		}
		c.add(report.RuleHealth, report.Info, c.healthLine(id, h.HealthRecord), data)
		if h.Probe != nil && h.Probe.FailuresInARow > 0 {
			c.add(report.RuleHealth, report.Info, say("the probe of target %s failed %d times in a row, last at %s: %s",
				"目标 %s 的探测连续失败 %d 次，最近一次在 %s：%s", id, h.Probe.FailuresInARow, c.when(h.Probe.LastFailure),
				h.Probe.LastError), map[string]any{"target": id, "probe_failures_in_a_row": h.Probe.FailuresInARow})
		}
	}
	return nil
}

// healthLine tells one target's delivery health; a failing target is
// also kept as the case's warning.
func (c *kase) healthLine(id string, h task.HealthRecord) text {
	switch {
	case h.FailuresInARow > 0:
		warn := say("target %s failed its last %d deliveries (last at %s: %s)",
			"目标 %s 最近 %d 次发送均失败（最近一次在 %s：%s）", id, h.FailuresInARow, c.when(h.LastFailure), h.LastError)
		if c.failing == nil {
			c.failing = &warn
		}
		return warn
	case !h.LastSuccess.IsZero():
		return say("target %s delivered last at %s", "目标 %s 最近一次成功发送在 %s", id, c.when(h.LastSuccess))
	}
	return say("target %s has no successful delivery yet", "目标 %s 尚无成功发送", id)
}
