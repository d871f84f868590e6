package fire

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// maxAlertScan bounds the ledger entries read to count a task's
// consecutive failures and find its last alert.
const maxAlertScan = 200

// maxAlertMessage caps the text an alert carries.
const maxAlertMessage = 1000

// alertLater checks, in the background, whether run's failure makes its
// task alert (Task.Alert), and sends the alert when it does.
func (f *Firer) alertLater(t *task.Task, run *task.Run) {
	if t.Alert == nil || run.TriggerType == task.TriggerAlert || !failed(run.State) {
		return
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.wg.Add(1)
	f.mu.Unlock()
	r := *run
	go func() {
		defer f.wg.Done()
		if err := f.alert(f.workCtx, t, &r); err != nil && !errors.Is(err, context.Canceled) {
			f.logger.Error("alert", "task_id", t.TaskID, "trigger_id", r.TriggerID, "error", err)
		}
	}()
}

// failed reports whether a final run state is a failure that alerts.
func failed(s task.RunState) bool { return s == task.RunDead || s == task.RunTimeout }

// alert counts the task's consecutive failed runs up to failedRun (newest
// slots first, alert runs aside) and, when they reach the threshold and
// no alert went out within the alert's interval, records one alert run
// per alert target under failedRun's slot and delivers it. The ledger key
// (task, slot, "alert:"+target) makes it one alert per failed slot
// whichever node sees the failure.
func (f *Firer) alert(ctx context.Context, t *task.Task, failedRun *task.Run) error {
	a := t.Alert
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	runs, err := f.store.ListRuns(sctx, t.TaskID, time.Time{}, maxAlertScan)
	cancel()
	if err != nil {
		return fmt.Errorf("read the runs of %s: %w", t.TaskID, err)
	}
	failures, counting := 0, true
	var lastAlert time.Time
	for _, r := range runs {
		switch {
		case r.TriggerType == task.TriggerAlert:
			if r.FiredAt.After(lastAlert) {
				lastAlert = r.FiredAt
			}
		case !counting || !r.State.Final() || r.Slot.After(failedRun.Slot):
			// not part of the streak that ends with failedRun
		case failed(r.State):
			failures++
		default:
			counting = false // a success ends the streak
		}
	}
	if failures < a.Threshold() {
		return nil
	}
	now := f.now()
	if !lastAlert.IsZero() && now.Sub(lastAlert) < a.Interval() {
		f.logger.InfoContext(ctx, "alert suppressed: the task alerted recently", "task_id", t.TaskID,
			"failures", failures, "last_alert", lastAlert)
		return nil
	}
	msg := task.Truncate(task.AlertMessage(t, failedRun, failures), maxAlertMessage)
	params := map[string]string{
		"alert_message":    msg,
		"alert_failures":   strconv.Itoa(failures),
		"alert_trigger_id": failedRun.TriggerID,
		"alert_state":      string(failedRun.State),
	}
	n, err := f.sendAlert(ctx, t, failedRun.Slot, task.AlertTargetPrefix, params)
	if n > 0 {
		f.logger.WarnContext(ctx, "alert sent", "task_id", t.TaskID, "failures", failures, "targets", n)
	}
	return err
}

// sendAlert records one alert run per alert target of t under slot (ledger
// target prefix+target id) and delivers those this call inserted; it
// returns how many. The ledger key makes each alert once per slot, prefix
// and target, whichever node sends it.
func (f *Firer) sendAlert(ctx context.Context, t *task.Task, slot time.Time, prefix string, params map[string]string) (int, error) {
	a := t.Alert
	now := f.now()
	if a.To != "" {
		params[task.ParamTo] = a.To
	}
	routes := make([]route, 0, len(a.Targets))
	for _, id := range a.Targets {
		r := &task.Run{
			TriggerID: NewTriggerID(), TaskID: t.TaskID, Slot: slot, Target: prefix + id,
			TriggerType: task.TriggerAlert, State: task.RunRunning, Attempt: 1, Node: f.cfg.Node, Fence: 1,
			FiredAt: now, Deadline: now.Add(ttlOf(t)), Params: params,
		}
		tg, err := f.getTarget(ctx, id)
		switch {
		case errors.Is(err, task.ErrNotFound):
			r.State, r.Attempt, r.FinishedAt, r.Deadline = task.RunDead, 0, now, time.Time{}
			r.Error = fmt.Sprintf("alert target %q not found", id)
		case err != nil:
			return 0, fmt.Errorf("read alert target %s: %w", id, err)
		}
		routes = append(routes, route{run: r, target: tg})
	}
	recs := make([]store.FireRecord, len(routes))
	for i, r := range routes {
		recs[i] = store.FireRecord{Run: r.run, Status: store.TaskStatusParams{TaskID: t.TaskID}}
	}
	sent := 0
	results, recorded := f.record(recs)
	defer recorded()
	for i, res := range results {
		switch {
		case res.Err != nil:
			return sent, fmt.Errorf("record alert of %s: %w", t.TaskID, res.Err)
		case !res.Inserted:
			continue // another node alerted for this slot already
		}
		sent++
		f.observeFire(t, routes[i].target, routes[i].run)
		if routes[i].run.State == task.RunRunning {
			f.deliverAsync(t, routes[i].target, routes[i].run, true)
		}
	}
	return sent, nil
}

// lastAlert returns when t last sent an alert of any kind, from its
// newest ledger entries (zero when none).
func (f *Firer) lastAlert(ctx context.Context, taskID string) (time.Time, error) {
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	runs, err := f.store.ListRuns(sctx, taskID, time.Time{}, maxAlertScan)
	cancel()
	if err != nil {
		return time.Time{}, fmt.Errorf("read the runs of %s: %w", taskID, err)
	}
	var last time.Time
	for _, r := range runs {
		if r.TriggerType == task.TriggerAlert && r.FiredAt.After(last) {
			last = r.FiredAt
		}
	}
	return last, nil
}

// WatchAbsence alerts on the expected slots that did not fire: tasks
// watching for absence (Alert.Absent) whose next fire is more than Absent
// ago, running and not done. It records one absence alert per alert target
// under that slot (ledger target "absent:"+id), so every node may watch
// and each absent slot alerts once; at most one alert of a task per its
// alert interval. It looks at up to limit tasks and returns how many
// alerted.
func (f *Firer) WatchAbsence(ctx context.Context, limit int) (int, error) {
	now := f.now()
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	tasks, err := f.store.OverdueTasks(sctx, now.Add(-task.MinAlertAbsent), limit)
	cancel()
	if err != nil {
		return 0, fmt.Errorf("watch absence: %w", err)
	}
	alerted := 0
	var errs []error
	for _, t := range tasks {
		if t.State != task.StateRunning {
			continue
		}
		sent, err := f.AlertAbsent(ctx, t, t.NextFire)
		if err != nil {
			errs = append(errs, err)
		}
		if sent {
			alerted++
		}
	}
	return alerted, errors.Join(errs...)
}

// AlertAbsent sends t's absence alert for slot when t watches for absence
// and slot is at least Alert.Absent ago, unless t alerted within its alert
// interval; it reports whether an alert went out from this call. Arming
// calls it for the first slot missed while no node held the task (the
// slot is late even when the misfire policy fires it now); WatchAbsence
// for a next fire that never came.
func (f *Firer) AlertAbsent(ctx context.Context, t *task.Task, slot time.Time) (bool, error) {
	a := t.Alert
	now := f.now()
	if a == nil || a.Absent <= 0 || slot.IsZero() || now.Sub(slot) < a.Absent {
		return false, nil
	}
	last, err := f.lastAlert(ctx, t.TaskID)
	if err != nil {
		return false, err
	}
	if !last.IsZero() && now.Sub(last) < a.Interval() {
		return false, nil // it alerted recently (this slot, or another cause)
	}
	msg := task.Truncate(task.AbsentMessage(t, slot, now), maxAlertMessage)
	params := map[string]string{"alert_message": msg, "alert_state": "absent",
		"alert_slot": slot.UTC().Format(time.RFC3339)}
	n, err := f.sendAlert(ctx, t, slot, task.AbsentTargetPrefix, params)
	if n > 0 {
		f.logger.WarnContext(ctx, "absence alert sent", "task_id", t.TaskID, "slot", slot, "targets", n)
	}
	return n > 0, err
}

// alertTargetID returns the target id of an alert run's ledger target
// (a failure or an absence alert), and whether it is one.
func alertTargetID(ledgerTarget string) (string, bool) {
	if id, ok := strings.CutPrefix(ledgerTarget, task.AlertTargetPrefix); ok {
		return id, true
	}
	return strings.CutPrefix(ledgerTarget, task.AbsentTargetPrefix)
}
