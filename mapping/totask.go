package mapping

import (
	"fmt"
	"strings"
	"time"

	"cronsheet/mapping/schedule"
	"cronsheet/task"
)

// Anchor returns the anchor of a schedule activated at now: the exact
// instant (to the millisecond, as stored). Slots of every schedule lie
// strictly after it; "every" and "in" count from the whole second at or
// after it (schedule.Phase), so their slots are whole seconds.
func Anchor(now time.Time) time.Time {
	return now.Truncate(time.Millisecond).UTC()
}

// ToTask maps a stored row to its task and validates it. It reads only the
// scenario's mapped fields, never changes row.Fields, and fills what a row
// leaves empty from the scenario's Defaults and then the built-in defaults.
//
// The task gets Scenario, RowID, TaskID, State running, CronPara (the
// canonical schedule text, aliases resolved), TZ (the schedule's zone),
// IsEnable (1 when active is 1), Anchor (Anchor(now); callers
// keep the old anchor when the schedule did not change) and the mapped
// fields. Claim and fire bookkeeping stay zero.
//
// Errors are *task.ValidationError naming the row field, e.g.
// `when: "dayly 8:00": unknown word "dayly" at 1; expected every, daily, …`.
func (s *Scenario) ToTask(row *task.Row, now time.Time) (*task.Task, error) {
	if row == nil {
		return nil, task.Invalid("row", "is missing")
	}
	if row.Scenario != "" && row.Scenario != s.cfg.Name {
		return nil, task.Invalid("scenario", "row belongs to %q, not %q", row.Scenario, s.cfg.Name)
	}
	m := &mapper{s: s, fields: row.Fields, now: now, loc: s.loc, t: &task.Task{
		Scenario: s.cfg.Name,
		RowID:    row.ID,
		State:    task.StateRunning,
		Anchor:   Anchor(now),
	}}
	steps := []func() error{
		func() error { return m.id(row.ID) },
		m.params, m.text, m.zone, m.when, m.repeat, m.channel, m.to, m.active, m.window,
		m.onceFires, m.limits, m.misfire, m.overlap, m.targets, m.alert,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return m.t, nil
}

// ParseSchedule parses a schedule as ToTask would, for previews: aliases
// resolve, and tz "" means the scenario's zone (a "tz" suffix in text wins).
// Errors are *task.ValidationError naming the schedule's row field.
func (s *Scenario) ParseSchedule(text, tz string) (*schedule.Schedule, error) {
	field := s.rowField(FieldCronPara)
	loc := s.loc
	if tz != "" {
		var err error
		if loc, err = loadZone(tz); err != nil {
			return nil, task.Invalid(s.rowField(FieldTZ), "%s", err)
		}
	}
	if strings.TrimSpace(text) == "" {
		return nil, task.Invalid(field, "is required")
	}
	if len(text) > maxText {
		return nil, task.Invalid(field, "is %d bytes long; at most %d", len(text), maxText)
	}
	sched, err := s.parseWhen(text, loc)
	if err != nil {
		return nil, task.Invalid(field, "%s", err)
	}
	return sched, nil
}

// Schedule parses a task's canonical CronPara in its zone TZ; a delayed
// job (Task.Job without CronPara) fires once, at its due time.
func Schedule(t *task.Task) (*schedule.Schedule, error) {
	if t.Job != nil && t.CronPara == "" {
		if t.Job.DueAt.IsZero() {
			return nil, fmt.Errorf("job %q has neither a due time nor a cron schedule: %w", t.TaskID, task.ErrInvalid)
		}
		return schedule.Instant(t.Job.DueAt), nil
	}
	sched, err := schedule.Parse(t.CronPara, t.TZ)
	if err != nil {
		return nil, fmt.Errorf("task %q: cron_para: %w", t.TaskID, err)
	}
	return sched, nil
}

// parseWhen resolves an alias and parses the schedule with loc as default
// zone. The error's text quotes what the user wrote, then the reason:
// `"dayly 8:00": unknown word "dayly" at 1; expected every, daily, …`.
func (s *Scenario) parseWhen(text string, loc *time.Location) (*schedule.Schedule, error) {
	src := strings.TrimSpace(text)
	if alias, ok := s.aliases[normalizeAlias(src)]; ok {
		src = alias
	}
	sched, err := schedule.Parse(src, loc.String())
	if err != nil {
		// ParseError's text is the reason only; quote what the user wrote.
		return nil, fmt.Errorf("%q: %w", truncate(strings.TrimSpace(text)), err)
	}
	return sched, nil
}

func (s *Scenario) rowField(canon string) string {
	if f := s.fields[canon]; f != "" {
		return f
	}
	return canon
}

// mapper carries one ToTask call through its steps.
type mapper struct {
	s      *Scenario
	fields map[string]any
	now    time.Time
	loc    *time.Location // the row's zone
	sched  *schedule.Schedule
	t      *task.Task
}

// get returns the row's value of a canonical field, or the scenario default
// when the row leaves it empty; nil when neither is given.
func (m *mapper) get(canon string) any {
	row := m.s.fields[canon]
	if row == "" {
		return nil
	}
	if v := m.fields[row]; !isEmpty(v) {
		return v
	}
	if v := m.s.cfg.Defaults[row]; !isEmpty(v) {
		return v
	}
	return nil
}

func (m *mapper) invalid(canon string, err error) error {
	return task.Invalid(m.s.rowField(canon), "%s", err)
}

func (m *mapper) setParam(key, value string) {
	if value == "" {
		return
	}
	if m.t.Params == nil {
		m.t.Params = make(map[string]string, 2)
	}
	m.t.Params[key] = value
}

func (m *mapper) id(rowID string) error {
	v := m.get(FieldTaskID)
	if v == nil {
		if rowID == "" {
			return m.invalid(FieldTaskID, fmt.Errorf("is required"))
		}
		m.t.TaskID = m.s.derivedID(rowID)
		return nil
	}
	id, err := textValue(v, maxText)
	if err == nil {
		err = checkID(id)
	}
	if err != nil {
		return m.invalid(FieldTaskID, err)
	}
	m.t.TaskID = id
	return nil
}

// params fills Task.Params from the scenario's param_fields (each under
// its row field's name), then from the params field (its keys win); title
// and to, set later, win over both.
func (m *mapper) params() error {
	for _, f := range m.s.cfg.ParamFields {
		v := m.fields[f]
		if isEmpty(v) {
			v = m.s.cfg.Defaults[f]
		}
		if isEmpty(v) {
			continue
		}
		text, err := paramText(v)
		if err != nil {
			return task.Invalid(f, "%s", err)
		}
		m.setParam(f, text)
	}
	if v := m.get(FieldParams); v != nil {
		p, err := readParams(v)
		if err != nil {
			return m.invalid(FieldParams, err)
		}
		if len(p) > 0 && m.t.Params == nil {
			m.t.Params = make(map[string]string, len(p)+2)
		}
		for k, val := range p {
			m.t.Params[k] = val // an empty value too: {{k}} then fills with ""
		}
	}
	if len(m.t.Params) > task.MaxParams-2 { // room for title and to
		return m.invalid(FieldParams, fmt.Errorf("the row gives %d params; at most %d", len(m.t.Params), task.MaxParams-2))
	}
	return nil
}

func (m *mapper) text() error {
	if v := m.get(FieldTitle); v != nil {
		title, err := lineValue(v)
		if err != nil {
			return m.invalid(FieldTitle, err)
		}
		m.setParam(task.ParamTitle, title)
	}
	if v := m.get(FieldTaskPara); v != nil {
		para, err := textValue(v, task.MaxTaskPara)
		if err != nil {
			return m.invalid(FieldTaskPara, err)
		}
		m.t.TaskPara = para
	}
	return nil
}

func (m *mapper) zone() error {
	if v := m.get(FieldTZ); v != nil {
		loc, err := readZone(v)
		if err != nil {
			return m.invalid(FieldTZ, err)
		}
		m.loc = loc
	}
	return nil
}

func (m *mapper) when() error {
	v := m.get(FieldCronPara)
	if v == nil {
		return m.invalid(FieldCronPara, fmt.Errorf("is required"))
	}
	text, err := textValue(v, maxText)
	if err != nil {
		return m.invalid(FieldCronPara, err)
	}
	sched, err := m.s.parseWhen(text, m.loc)
	if err != nil {
		return m.invalid(FieldCronPara, err)
	}
	if loc := sched.Location(); loc != nil {
		m.loc = loc // a "tz" suffix in the text wins over the tz field
	}
	m.sched = sched
	m.t.CronPara = sched.String()
	m.t.TZ = m.loc.String()
	if sched.IsOnce() {
		next := sched.Next(m.now, m.t.Anchor)
		if next.IsZero() || !next.After(m.now) {
			return m.invalid(FieldCronPara, fmt.Errorf("%q is in the past (now %s)",
				strings.TrimSpace(text), m.now.In(m.loc).Format(time.RFC3339)))
		}
	}
	return nil
}

func (m *mapper) repeat() error {
	v := m.get(FieldExecuteType)
	if v == nil {
		m.t.ExecuteType = task.Periodic
		if m.sched.IsOnce() {
			m.t.ExecuteType = task.Once
		}
		return nil
	}
	et, err := readExecuteType(v)
	if err != nil {
		return m.invalid(FieldExecuteType, err)
	}
	m.t.ExecuteType = et
	return nil
}

func (m *mapper) channel() error {
	m.t.TaskType = task.ChannelOutbox
	if v := m.get(FieldTaskType); v != nil {
		c, err := readChannel(v)
		if err != nil {
			return m.invalid(FieldTaskType, err)
		}
		m.t.TaskType = c
	}
	return nil
}

func (m *mapper) to() error {
	var to string
	if v := m.get(FieldTo); v != nil {
		var err error
		if to, err = lineValue(v); err != nil {
			return m.invalid(FieldTo, err)
		}
	}
	var err error
	switch c := m.t.TaskType; {
	case c == task.ChannelOutbox:
	case to == "":
		err = fmt.Errorf("is required for channel %s", c)
	case c == task.ChannelEmail:
		err = task.CheckEmail(to)
	case c == task.ChannelSMS:
		err = task.CheckPhone(to)
	}
	if err != nil {
		return m.invalid(FieldTo, err)
	}
	m.setParam(task.ParamTo, to)
	return nil
}

func (m *mapper) active() error {
	m.t.IsEnable = 1
	if v := m.get(FieldActive); v != nil {
		on, err := flagValue(v)
		if err != nil {
			return m.invalid(FieldActive, err)
		}
		m.t.IsEnable = on
	}
	return nil
}

// window reads start and end in the row's zone.
func (m *mapper) window() error {
	for _, f := range []struct {
		canon string
		dst   *time.Time
	}{{FieldStartTime, &m.t.StartTime}, {FieldEndTime, &m.t.EndTime}} {
		if v := m.get(f.canon); v != nil {
			t, err := timeValue(v, m.loc)
			if err != nil {
				return m.invalid(f.canon, err)
			}
			*f.dst = t.UTC()
		}
	}
	start, end := m.t.StartTime, m.t.EndTime
	switch {
	case end.IsZero():
	case !start.IsZero() && !end.After(start):
		return m.invalid(FieldEndTime, fmt.Errorf("%s is not after start %s",
			end.In(m.loc).Format(time.RFC3339), start.In(m.loc).Format(time.RFC3339)))
	case !m.sched.IsOnce() && !end.After(m.now):
		return m.invalid(FieldEndTime, fmt.Errorf("%s is in the past (now %s)",
			end.In(m.loc).Format(time.RFC3339), m.now.In(m.loc).Format(time.RFC3339)))
	}
	return nil
}

// onceFires refuses a one-shot schedule whose only slot lies outside the
// row's start/end window: saved, it would stay active and never fire. The
// slot is computed as the fire planner does: intervals ("in") count from
// the start when one is given, and no slot lies before the start.
func (m *mapper) onceFires() error {
	if !m.sched.IsOnce() {
		return nil
	}
	start, end := m.t.StartTime, m.t.EndTime
	anchor := m.t.Anchor
	if !start.IsZero() {
		anchor = start
	}
	slot := m.sched.Next(m.now, anchor)
	if slot.IsZero() {
		return nil // past: when() refused it already, or a start in the past misfires it
	}
	format := func(t time.Time) string { return t.In(m.loc).Format(time.RFC3339) }
	switch {
	case !start.IsZero() && slot.Before(start):
		return m.invalid(FieldCronPara, fmt.Errorf("fires once at %s, before the start %s, so it would never fire",
			format(slot), format(start)))
	case !end.IsZero() && slot.After(end):
		return m.invalid(FieldCronPara, fmt.Errorf("fires once at %s, after the end %s, so it would never fire",
			format(slot), format(end)))
	}
	return nil
}

func (m *mapper) limits() error {
	m.t.TTL = task.DefaultTTL
	if v := m.get(FieldTTL); v != nil {
		ttl, err := readTTL(v)
		if err != nil {
			return m.invalid(FieldTTL, err)
		}
		m.t.TTL = ttl
	}
	m.t.MaxRetries = task.DefaultRetries
	if v := m.get(FieldMaxRetries); v != nil {
		n, err := readRetries(v)
		if err != nil {
			return m.invalid(FieldMaxRetries, err)
		}
		m.t.MaxRetries = n
	}
	return nil
}

func (m *mapper) misfire() error {
	m.t.Misfire = m.s.misfire
	if v := m.get(FieldMisfire); v != nil {
		mf, err := readMisfire(v)
		if err != nil {
			return m.invalid(FieldMisfire, err)
		}
		m.t.Misfire = mf
	}
	return nil
}

func (m *mapper) overlap() error {
	if v := m.get(FieldOverlap); v != nil {
		o, err := readOverlap(v)
		if err != nil {
			return m.invalid(FieldOverlap, err)
		}
		m.t.Overlap = o
	}
	return nil
}

// alert reads the alert fields: targets to tell when the task keeps
// failing, the recipient for email/SMS ones, and after how many failures.
func (m *mapper) alert() error {
	v := m.get(FieldAlert)
	if v == nil {
		for _, f := range []string{FieldAlertTo, FieldAlertAfter, FieldAlertAbsent} {
			if m.get(f) != nil {
				return m.invalid(f, fmt.Errorf("needs alert targets in %s", m.s.Field(FieldAlert)))
			}
		}
		return nil
	}
	ids, err := readTargets(v)
	if err != nil {
		return m.invalid(FieldAlert, err)
	}
	if len(ids) == 0 {
		return nil
	}
	if len(ids) > task.MaxAlertTargets {
		return m.invalid(FieldAlert, fmt.Errorf("at most %d alert targets", task.MaxAlertTargets))
	}
	a := &task.Alert{Targets: ids}
	if v := m.get(FieldAlertTo); v != nil {
		if a.To, err = lineValue(v); err != nil {
			return m.invalid(FieldAlertTo, err)
		}
		if a.To != "" && task.CheckEmail(a.To) != nil && task.CheckPhone(a.To) != nil {
			return m.invalid(FieldAlertTo, fmt.Errorf("%q is neither an email address nor an E.164 phone number", a.To))
		}
	}
	if v := m.get(FieldAlertAfter); v != nil {
		if a.After, err = readAlertAfter(v); err != nil {
			return m.invalid(FieldAlertAfter, err)
		}
	}
	if v := m.get(FieldAlertAbsent); v != nil {
		if a.Absent, err = readAlertAbsent(v); err != nil {
			return m.invalid(FieldAlertAbsent, err)
		}
	}
	m.t.Alert = a
	return nil
}

func (m *mapper) targets() error {
	v := m.get(FieldTargets)
	if v == nil {
		return nil
	}
	ids, err := readTargets(v)
	if err != nil {
		return m.invalid(FieldTargets, err)
	}
	m.t.Targets = ids
	return nil
}
