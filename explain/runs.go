package explain

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"cronsheet/explain/report"
	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// checkOverlap: a run skipped for overlap at the slot, or, for a slot
// ahead, a run in flight now and the policy (fire.OverlapOf) that will
// meet it.
func (e *Explainer) checkOverlap(ctx context.Context, c *kase) error {
	policy := fire.OverlapOf(c.t, c.triggerType())
	data := map[string]any{"policy": policy}
	if i := slices.IndexFunc(c.records, func(r *task.Run) bool { return r.State == task.RunSkipped }); i >= 0 {
		data["trigger_id"] = c.records[i].TriggerID
		c.add(report.RuleOverlap, report.Fail, say("the previous run was still in progress (overlap: %s)",
			"上一次运行仍在进行中（overlap: %s）", policy), data)
		return nil
	}
	if c.past {
		c.add(report.RuleOverlap, report.Pass, say("no run of the slot was skipped for overlap (overlap: %s)",
			"该时刻没有因重叠而被跳过的运行（overlap: %s）", policy), data)
		return nil
	}
	runs, err := e.d.Store.UnfinishedRuns(ctx, c.t.TaskID)
	if err != nil {
		return fmt.Errorf("read unfinished runs: %w", err)
	}
	var busy []string
	for _, r := range runs {
		if r.TriggerType != task.TriggerAlert {
			busy = append(busy, r.TriggerID)
		}
	}
	data["in_flight"] = busy
	switch {
	case len(busy) == 0:
		c.add(report.RuleOverlap, report.Pass, say("no run is in flight (overlap: %s)", "没有进行中的运行（overlap: %s）", policy), data)
	case policy == task.OverlapSkip:
		c.add(report.RuleOverlap, report.Info, say("run %s is in flight: if it still is at the slot, the slot is skipped (overlap: skip)",
			"运行 %s 正在进行：若到该时刻仍未结束，该时刻将被跳过（overlap: skip）", busy[0]), data)
	case policy == task.OverlapQueue:
		c.add(report.RuleOverlap, report.Info, say("run %s is in flight: if it still is at the slot, the slot waits for it (overlap: queue)",
			"运行 %s 正在进行：若到该时刻仍未结束，该时刻将排队等待（overlap: queue）", busy[0]), data)
	default:
		c.add(report.RuleOverlap, report.Pass, say("run %s is in flight; the slot fires beside it (overlap: allow)",
			"运行 %s 正在进行；该时刻仍会同时触发（overlap: allow）", busy[0]), data)
	}
	return nil
}

// checkMisfire: a past slot the ledger does not hold was missed while no
// node held the task; fire.MakePlan, from the scheduled slot recorded
// before it, says whether arming the task replays it.
func (e *Explainer) checkMisfire(ctx context.Context, c *kase) error {
	policy := c.t.Misfire
	data := map[string]any{"policy": policy}
	switch {
	case !c.past:
		c.add(report.RuleMisfire, report.Info, say("the slot is ahead: no misfire policy applies", "该时刻尚未到来：不涉及错过策略"), data)
		return nil
	case len(c.records) > 0:
		c.add(report.RuleMisfire, report.Pass, say("the slot is in the ledger (trigger type %s)", "该时刻已记入账本（触发类型 %s）",
			c.records[0].TriggerType), data)
		return nil
	case c.schedErr != nil:
		c.add(report.RuleMisfire, report.Info, say("no schedule to replay", "没有可补发的日程"), data)
		return nil
	}
	prev, err := e.lastScheduled(ctx, c.t.TaskID, c.slot)
	if err != nil {
		return err
	}
	plan := fire.MakePlan(c.slots, policy, prev, c.now)
	data["replayed"] = plan.Missed
	data["dropped"] = plan.Skipped
	switch {
	case slices.ContainsFunc(plan.Missed, c.slot.Equal):
		c.add(report.RuleMisfire, report.Info, say("the slot was missed; misfire: %s fires it late when a node arms the task",
			"该时刻已错过；misfire: %s 会在节点接管任务时补发", policy), data)
	case policy == task.MisfireSkip:
		c.add(report.RuleMisfire, report.Fail, say("the slot was missed while no node held the task, and misfire: skip drops missed slots",
			"该时刻在无节点持有任务时错过，而 misfire: skip 会丢弃错过的时刻"), data)
	case policy == task.MisfireAll:
		c.add(report.RuleMisfire, report.Fail, say("the slot was missed while no node held the task, beyond the %d slots misfire: all replays",
			"该时刻在无节点持有任务时错过，超出了 misfire: all 补发的 %d 个时刻", task.MaxMisfireSlots), data)
	default:
		c.add(report.RuleMisfire, report.Fail, say("the slot was missed while no node held the task, and misfire: %s replays only the latest missed slot",
			"该时刻在无节点持有任务时错过，而 misfire: %s 只补发最近错过的一个时刻", policy), data)
	}
	return nil
}

// checkClaim: the node holding the task is running and its lease holds;
// an unclaimed task parked until before the slot is claimed in time.
func (e *Explainer) checkClaim(ctx context.Context, c *kase) error {
	t := c.t
	data := map[string]any{"is_claimed": t.IsClaimed, "claimed_by": t.ClaimedBy}
	if !t.LeaseUntil.IsZero() {
		data["lease_until"] = t.LeaseUntil
	}
	if !t.ArmAt.IsZero() {
		data["arm_at"] = t.ArmAt
	}
	if len(c.records) > 0 {
		c.add(report.RuleClaim, report.Info, say("the slot is in the ledger; the claim now does not change it",
			"该时刻已记入账本；当前的认领不影响它"), data)
		return nil
	}
	if t.IsClaimed != 1 {
		switch {
		case t.IsEnable != 1 || t.IsDone == 1:
			c.add(report.RuleClaim, report.Info, say("no node holds the task: only enabled tasks are claimed",
				"没有节点持有该任务：只有启用的任务才会被认领"), data)
		case !t.ArmAt.IsZero() && (c.slot.IsZero() || !t.ArmAt.After(c.slot)):
			c.add(report.RuleClaim, report.Pass, say("the task is parked: a node claims it from %s, before the slot",
				"任务已暂存：节点将于 %s 起认领，早于该时刻", c.when(t.ArmAt)), data)
		default:
			c.add(report.RuleClaim, report.Fail, say("no node holds the task", "没有节点持有该任务"), data)
		}
		return nil
	}
	nodes, err := e.d.Store.ListNodes(ctx)
	if err != nil {
		return fmt.Errorf("read the node registry: %w", err)
	}
	running := slices.ContainsFunc(nodes, func(n store.Node) bool {
		return n.ID == t.ClaimedBy && (e.d.Lease <= 0 || c.now.Sub(n.BeatAt) < e.d.Lease)
	})
	data["node_running"] = running
	switch {
	case !running:
		c.add(report.RuleClaim, report.Fail, say("node %s holds the task but is not running (its lease runs until %s; another node takes over after)",
			"节点 %s 持有该任务但未在运行（租约至 %s；之后由其他节点接管）", t.ClaimedBy, c.when(t.LeaseUntil)), data)
	case !t.LeaseUntil.After(c.now):
		c.add(report.RuleClaim, report.Fail, say("the lease of node %s expired at %s; another node takes the task over",
			"节点 %s 的租约已于 %s 到期；将由其他节点接管", t.ClaimedBy, c.when(t.LeaseUntil)), data)
	default:
		c.add(report.RuleClaim, report.Pass, say("node %s holds the task; its lease runs until %s",
			"节点 %s 持有该任务；租约至 %s", t.ClaimedBy, c.when(t.LeaseUntil)), data)
	}
	return nil
}

// checkLedger: the runs recorded for the slot, if any.
func (e *Explainer) checkLedger(_ context.Context, c *kase) error {
	var runs []map[string]any
	for _, r := range c.records {
		runs = append(runs, map[string]any{"trigger_id": r.TriggerID, "target": r.Target, "state": r.State,
			"trigger_type": r.TriggerType, "error": r.Error})
	}
	data := map[string]any{"runs": runs}
	switch i := slices.IndexFunc(c.records, fired); {
	case i >= 0:
		r := c.records[i]
		c.add(report.RuleLedger, report.Pass, say("run %s to %s is %s", "运行 %s（发往 %s）状态为 %s", r.TriggerID, r.Target, r.State),
			data)
	case len(c.records) > 0:
		r := c.records[0]
		c.add(report.RuleLedger, report.Fail, say("run %s to %s was recorded %s: %s", "运行 %s（发往 %s）被记为 %s：%s",
			r.TriggerID, r.Target, r.State, strings.TrimSpace(r.Error)), data)
	case c.past:
		c.add(report.RuleLedger, report.Fail, say("the ledger has no record of the slot", "账本中没有该时刻的记录"), data)
	default:
		c.add(report.RuleLedger, report.Info, say("no record yet: the slot is ahead", "尚无记录：该时刻尚未到来"), data)
	}
	return nil
}
