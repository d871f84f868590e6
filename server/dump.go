package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"cronsheet/config"
	"cronsheet/store"
	"cronsheet/task"
)

// DumpRecord is one line of `cronsheet export`: exactly one of Target,
// Row, Audit, Task, JobEvent, Run, Message, Flow and Execution is set, as
// Kind says. Dumps
// written before targets, audit records or job events were carried lack
// those records and import as they did. Nodes (heartbeats of running
// processes) are never dumped.
type DumpRecord struct {
	Kind     string              `json:"kind"` // target, row, audit, task, job_event, run, outbox, flow or execution
	Target   *task.Target        `json:"target,omitempty"`
	Row      *task.Row           `json:"row,omitempty"`
	Audit    *store.AuditRecord  `json:"audit,omitempty"`
	Task     *store.TaskDump     `json:"task,omitempty"`
	JobEvent *store.JobEvent     `json:"job_event,omitempty"`
	Run      *task.Run           `json:"run,omitempty"`
	Message  *task.OutboxMessage `json:"message,omitempty"`
	// Flow and Execution: a task flow and one of its executions
	// (store.FlowDumper).
	Flow      *task.Flow      `json:"flow,omitempty"`
	Execution *task.Execution `json:"execution,omitempty"`
}

// Dump record kinds, in the order Export writes them: targets first, as
// tasks and runs name them.
const (
	KindTarget   = "target"
	KindRow      = "row"
	KindAudit    = "audit"
	KindTask     = "task"
	KindJobEvent = "job_event"
	KindRun      = "run"
	KindOutbox   = "outbox"
	// Flows come after targets (their steps name them), executions after
	// runs (their step runs name them).
	KindFlow      = "flow"
	KindExecution = "execution"
)

// DumpCounts counts records per kind.
type DumpCounts struct {
	Rows, Tasks, Runs, Outbox, Targets, Audit, JobEvents int
	Flows, Executions                                    int
}

// String lists every count, for the export and import commands.
func (n DumpCounts) String() string {
	return fmt.Sprintf("%d targets, %d rows, %d audit records, %d tasks, %d job events, %d runs, %d outbox messages, %d flows, %d flow executions",
		n.Targets, n.Rows, n.Audit, n.Tasks, n.JobEvents, n.Runs, n.Outbox, n.Flows, n.Executions)
}

// ImportCounts says what Import read and what it stored; the rest was
// already in the store (same key: target id, row key, audit id, task id,
// a job that has events, ledger key, outbox id or trigger id).
type ImportCounts struct {
	Read   DumpCounts
	Stored DumpCounts
}

// Export opens the configured store and writes everything it holds to w as
// JSON lines (see ExportStore).
func Export(ctx context.Context, cfg config.Store, w io.Writer) (DumpCounts, error) {
	st, err := openStore(ctx, cfg)
	if err != nil {
		return DumpCounts{}, err
	}
	n, err := ExportStore(ctx, st, w)
	return n, errors.Join(err, st.Close())
}

// Import opens the configured store and loads the JSON lines of r into it
// (see ImportStore).
func Import(ctx context.Context, cfg config.Store, r io.Reader) (ImportCounts, error) {
	st, err := openStore(ctx, cfg)
	if err != nil {
		return ImportCounts{}, err
	}
	n, err := ImportStore(ctx, st, r)
	return n, errors.Join(err, st.Close())
}

// ExportStore writes every target, row, audit record, task (claims left
// out), job event, run and outbox message of st to w, one DumpRecord per
// line, in that order.
func ExportStore(ctx context.Context, st store.Product, w io.Writer) (DumpCounts, error) {
	var n DumpCounts
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := st.DumpTargets(ctx, func(t *task.Target) error {
		n.Targets++
		return enc.Encode(DumpRecord{Kind: KindTarget, Target: t})
	}); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := st.DumpFlows(ctx, func(f *task.Flow) error {
		n.Flows++
		return enc.Encode(DumpRecord{Kind: KindFlow, Flow: f})
	}); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := st.DumpRows(ctx, func(r *task.Row) error {
		n.Rows++
		return enc.Encode(DumpRecord{Kind: KindRow, Row: r})
	}); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := st.DumpAudit(ctx, func(a *store.AuditRecord) error {
		n.Audit++
		return enc.Encode(DumpRecord{Kind: KindAudit, Audit: a})
	}); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := st.DumpTasks(ctx, func(t store.TaskDump) error {
		n.Tasks++
		return enc.Encode(DumpRecord{Kind: KindTask, Task: &t})
	}); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := st.DumpJobEvents(ctx, func(ev store.JobEvent) error {
		n.JobEvents++
		return enc.Encode(DumpRecord{Kind: KindJobEvent, JobEvent: &ev})
	}); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := st.DumpRuns(ctx, func(r *task.Run) error {
		n.Runs++
		return enc.Encode(DumpRecord{Kind: KindRun, Run: r})
	}); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := st.DumpExecutions(ctx, func(x *task.Execution) error {
		n.Executions++
		return enc.Encode(DumpRecord{Kind: KindExecution, Execution: x})
	}); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := st.DumpOutbox(ctx, func(m *task.OutboxMessage) error {
		n.Outbox++
		return enc.Encode(DumpRecord{Kind: KindOutbox, Message: m})
	}); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	return n, nil
}

// ImportStore loads the DumpRecords of r into st. What st already holds
// (same target id, row key, task id, ledger key or outbox trigger id / id)
// is left as it is, so importing the same file twice changes nothing. Row
// field numbers keep their written form (json.Number). A dump without
// target records (written before targets were carried) imports as well.
func ImportStore(ctx context.Context, st store.Product, r io.Reader) (ImportCounts, error) {
	var n ImportCounts
	dec := json.NewDecoder(r)
	dec.UseNumber()
	// A job's events come together (the dump is ordered by job) and are
	// restored together, when the next record is not one of them.
	var events []store.JobEvent
	flush := func() error {
		if len(events) == 0 {
			return nil
		}
		ok, err := st.RestoreJobEvents(ctx, events[0].JobID, events)
		if ok {
			n.Stored.JobEvents += len(events)
		}
		events = events[:0]
		return err
	}
	for line := 1; ; line++ {
		var rec DumpRecord
		err := dec.Decode(&rec)
		if errors.Is(err, io.EOF) {
			if err := flush(); err != nil {
				return n, fmt.Errorf("import record %d: %w", line-1, err)
			}
			return n, nil
		}
		if err == nil && rec.Kind == KindJobEvent && rec.JobEvent != nil {
			n.Read.JobEvents++
			if len(events) > 0 && events[0].JobID != rec.JobEvent.JobID {
				err = flush()
			}
			events = append(events, *rec.JobEvent)
		} else if err == nil {
			if err = flush(); err == nil {
				err = importRecord(ctx, st, &rec, &n)
			}
		}
		if err != nil {
			return n, fmt.Errorf("import record %d: %w", line, err)
		}
	}
}

// importRecord stores one record and counts it.
func importRecord(ctx context.Context, st store.Product, rec *DumpRecord, n *ImportCounts) error {
	var (
		ok  bool
		err error
	)
	switch {
	case rec.Kind == KindTarget && rec.Target != nil:
		n.Read.Targets++
		if ok, err = st.RestoreTarget(ctx, rec.Target); ok {
			n.Stored.Targets++
		}
	case rec.Kind == KindAudit && rec.Audit != nil:
		n.Read.Audit++
		if ok, err = st.RestoreAudit(ctx, rec.Audit); ok {
			n.Stored.Audit++
		}
	case rec.Kind == KindRow && rec.Row != nil:
		n.Read.Rows++
		if ok, err = st.RestoreRow(ctx, rec.Row); ok {
			n.Stored.Rows++
		}
	case rec.Kind == KindTask && rec.Task != nil:
		n.Read.Tasks++
		if ok, err = st.RestoreTask(ctx, *rec.Task); ok {
			n.Stored.Tasks++
		}
	case rec.Kind == KindRun && rec.Run != nil:
		n.Read.Runs++
		if ok, err = st.InsertRun(ctx, rec.Run); ok {
			n.Stored.Runs++
		}
	case rec.Kind == KindOutbox && rec.Message != nil:
		n.Read.Outbox++
		if ok, err = st.RestoreOutbox(ctx, rec.Message); ok {
			n.Stored.Outbox++
		}
	case rec.Kind == KindFlow && rec.Flow != nil:
		n.Read.Flows++
		if ok, err = st.RestoreFlow(ctx, rec.Flow); ok {
			n.Stored.Flows++
		}
	case rec.Kind == KindExecution && rec.Execution != nil:
		n.Read.Executions++
		if ok, err = st.RestoreExecution(ctx, rec.Execution); ok {
			n.Stored.Executions++
		}
	default:
		return fmt.Errorf("kind %q without its record", rec.Kind)
	}
	return err
}
