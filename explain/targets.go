package explain

import (
	"context"
	"errors"
	"fmt"

	"cronsheet/admission"
	"cronsheet/explain/report"
	"cronsheet/task"
)

// triggerType is the trigger a fire of the slot has: misfire for a past
// slot not yet recorded (a node arming the task would replay it), the
// record's own otherwise, else schedule.
func (c *kase) triggerType() task.TriggerType {
	if len(c.records) > 0 {
		return c.records[0].TriggerType
	}
	if c.past {
		return task.TriggerMisfire
	}
	return task.TriggerSchedule
}

// checkTargets: for each target of the task, its state (task.Admit) and
// its admission (host guard, cc group, host rate). A task without targets
// delivers through its own channel.
func (e *Explainer) checkTargets(ctx context.Context, c *kase) error {
	t := c.t
	if len(t.Targets) == 0 {
		data := map[string]any{"channel": t.TaskType}
		c.add(report.RuleTarget, report.Info, say("no targets: it delivers through its own channel %s",
			"没有目标：通过自身渠道 %s 发送", t.TaskType), data)
		c.add(report.RuleAdmission, report.Info, say("no concurrency group or host limit applies to channel %s",
			"渠道 %s 不受并发组或主机限速约束", t.TaskType), data)
		return nil
	}
	for _, id := range t.Targets {
		tg, err := e.d.Store.GetTarget(ctx, id)
		if errors.Is(err, task.ErrNotFound) {
			c.add(report.RuleTarget, report.Fail, say("target %s does not exist", "目标 %s 不存在", id),
				map[string]any{"target": id})
			continue
		}
		if err != nil {
			return fmt.Errorf("read target %s: %w", id, err)
		}
		c.targetState(tg)
		e.admission(c, tg)
	}
	return nil
}

// targetState adds the check of tg's state for the slot's trigger.
func (c *kase) targetState(tg *task.Target) {
	data := map[string]any{"target": tg.ID, "kind": tg.Kind, "state": tg.State}
	why := task.Admit(task.StateRunning, tg.State, c.triggerType())
	switch {
	case why == "":
		c.add(report.RuleTarget, report.Pass, say("target %s is %s", "目标 %s 状态为 %s", tg.ID, tg.State), data)
	case tg.State == task.TargetPaused:
		c.add(report.RuleTarget, report.Fail, say("target %s is paused: it accepts manual triggers only",
			"目标 %s 已暂停：只接受手动触发", tg.ID), data)
	case tg.State == task.TargetPreset:
		c.add(report.RuleTarget, report.Fail, say("target %s is preset: it accepts no trigger yet",
			"目标 %s 处于预置状态：尚不接受任何触发", tg.ID), data)
	default:
		c.add(report.RuleTarget, report.Fail, say("target %s: %s", "目标 %s：%s", tg.ID, why), data)
	}
}

// admission adds the check of tg's admission: the host guard (and the
// other configuration checks of Deps.CheckTarget) refuses or passes; a
// concurrency group (jobs only) and the host's rate limit only delay.
func (e *Explainer) admission(c *kase, tg *task.Target) {
	data := map[string]any{"target": tg.ID, "cc_group": "", "cc_limit": 0}
	host := ""
	if tg.Kind == task.ChannelHTTP && tg.HTTP != nil {
		host = admission.HostOf(tg.HTTP.URL)
		data["host"] = host
	}
	if e.d.CheckTarget != nil {
		if err := e.d.CheckTarget(tg); err != nil {
			data["refused"] = err.Error()
			c.add(report.RuleAdmission, report.Fail, say("target %s is refused by this node's configuration: %v",
				"目标 %s 被本节点的配置拒绝：%v", tg.ID, err), data)
			return
		}
	}
	var limit admission.HostLimit
	if host != "" && e.d.HostLimit != nil {
		limit = e.d.HostLimit(host)
	}
	data["host_rate"], data["host_burst"] = limit.Rate, limit.Burst
	switch {
	case host == "":
		c.add(report.RuleAdmission, report.Pass, say("target %s is allowed; no concurrency group (only jobs have one), no host limit",
			"目标 %s 允许发送；无并发组（仅作业有），无主机限速", tg.ID), data)
	case limit.Rate > 0:
		c.add(report.RuleAdmission, report.Pass, say("host %s is allowed, limited to %g requests/s (burst %d): a busy host delays, never drops",
			"主机 %s 允许访问，限速每秒 %g 次（突发 %d）：繁忙时延后，不会丢弃", host, limit.Rate, limit.Burst), data)
	default:
		c.add(report.RuleAdmission, report.Pass, say("host %s is allowed, with no rate limit", "主机 %s 允许访问，无限速", host), data)
	}
}
