package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"
)

// The history loop (schema.go, "QueryRuns"): a fire inserts its run
// unlisted, out of the history indexes, and the loop lists the runs after
// runs_history.mark in bulk, a chunk a transaction. It lists the tail when
// it has stopped growing for a tick (a burst is over) or has reached
// historyEager runs, so a burst's fires and outcomes do not share the
// writer with it while the tail that every history query sorts stays
// small.
const (
	// historyTick is how often the loop looks at the tail.
	historyTick = time.Second
	// historyEager is the tail the loop lists even while it still grows.
	historyEager = 10_000
	// historyChunk is how many runs one of its transactions lists.
	historyChunk = 5_000
)

const (
	// qHistoryMark is the id up to which every run is listed.
	qHistoryMark = `SELECT mark FROM runs_history WHERE id = 1`
	// qHistoryTail reads the mark and the largest run id.
	qHistoryTail = `SELECT (` + qHistoryMark + `), coalesce((SELECT max(id) FROM runs), 0)`
	// qListHistory lists the unlisted runs in (?1, ?2] (a rowid range).
	qListHistory = `UPDATE runs SET unlisted = 0 WHERE id > ?1 AND id <= ?2 AND unlisted = 1`
	// qMoveMark moves the mark from ?1 to ?2.
	qMoveMark = `UPDATE runs_history SET mark = ?2 WHERE id = 1 AND mark = ?1`
)

// historyUnion returns a history query: the columns cols (which include
// fired_at and trigger_id) of the runs matching cond, newest first by
// (fired_at, trigger_id), at most limit (a parameter, such as "?3") of
// them. It reads the listed runs through index (an index range in order,
// at most limit of them) and the tail after the mark (a rowid range, NOT
// INDEXED so that a filter never walks a whole task's ledger instead;
// about historyEager runs at most while the loop keeps up; sorted by key
// and id alone, then at most limit
// rows read whole by id), and sorts the union, at most twice limit
// rows. Both halves read in the one statement's snapshot, and a run is in
// exactly one of them: unlisted = 0, or unlisted = 1 after the mark.
func historyUnion(cols, index, cond, limit string) string {
	order := ` ORDER BY fired_at DESC, trigger_id DESC LIMIT ` + limit
	return `SELECT * FROM (SELECT ` + cols + ` FROM runs INDEXED BY ` + index + `
			WHERE unlisted = 0 AND ` + cond + order + `)
		UNION ALL SELECT * FROM (SELECT ` + cols + ` FROM runs WHERE id IN (SELECT id FROM runs NOT INDEXED
			WHERE id > (` + qHistoryMark + `) AND unlisted = 1 AND ` + cond + order + `)` + order + `)` + order
}

// listHistory lists the unlisted runs after the mark, up to the largest id
// it reads first (never above the largest id there is, so the mark stays
// at or below it and a new run's id above it), at most historyChunk a
// transaction, until ctx ends. It returns how many runs it listed. Several processes on one file may list
// at once: each transaction reads the mark under the write lock.
func (s *Store) listHistory(ctx context.Context) (int, error) {
	var mark, top int64
	if err := s.r.QueryRowContext(ctx, qHistoryTail).Scan(&mark, &top); err != nil {
		return 0, fmt.Errorf("list history: %w", translate(err))
	}
	listed := 0
	for mark < top && ctx.Err() == nil {
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			// The mark and the largest id again, under the write lock: a
			// run deleted since may have lowered both.
			var now int64
			if err := tx.QueryRowContext(ctx, qHistoryTail).Scan(&mark, &now); err != nil {
				return translate(err)
			}
			top = min(top, now)
			upto := min(mark+historyChunk, top)
			if upto <= mark {
				return nil
			}
			n, err := execTx(ctx, tx, qListHistory, mark, upto)
			if err != nil {
				return err
			}
			if _, err := execTx(ctx, tx, qMoveMark, mark, upto); err != nil {
				return err
			}
			listed += n
			mark = upto
			return nil
		})
		if err != nil {
			return listed, fmt.Errorf("list history: %w", err)
		}
	}
	return listed, nil
}

// execTx runs the write q in tx and returns how many rows it changed.
// The loop's statements are not prepared: they run once a chunk.
func execTx(ctx context.Context, tx *sql.Tx, q string, args ...any) (int, error) {
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, translate(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// historyLoop runs listHistory each historyTick when the tail has stopped
// growing since the last tick or holds historyEager runs, until ctx ends.
func (s *Store) historyLoop(ctx context.Context) {
	t := time.NewTicker(historyTick)
	defer t.Stop()
	var lastTop int64 = -1
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var mark, top int64
		if err := s.r.QueryRowContext(ctx, qHistoryTail).Scan(&mark, &top); err != nil {
			if ctx.Err() == nil {
				slog.WarnContext(ctx, "read the runs' history mark", "err", err)
			}
			continue
		}
		quiet := top == lastTop
		lastTop = top
		if top <= mark || (!quiet && top-mark < historyEager) {
			continue
		}
		if _, err := s.listHistory(ctx); err != nil && ctx.Err() == nil {
			slog.WarnContext(ctx, "list runs in the history indexes", "err", err)
		}
	}
}
