package sqlite

import (
	"errors"
	"fmt"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"cronsheet/task"
)

// errDiskFull is the cause every door names when the data file's
// filesystem is full: SQLite answers SQLITE_FULL ("database or disk is
// full") when it cannot grow the file or its write-ahead log (ENOSPC).
var errDiskFull = errors.New("the store's disk is full; writes resume once space is freed on the data file's filesystem")

// isDiskFull reports whether err is SQLite's SQLITE_FULL.
func isDiskFull(err error) bool {
	var se *msqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL
}

// diskFull returns err coded task.CodeServiceUnavailable and naming the
// cause when it is SQLITE_FULL, so the API, the web table and the jobs
// service answer 503 "the store's disk is full" rather than a bare 500;
// any other error (and one already coded) is returned as it is.
func diskFull(err error) error {
	if !isDiskFull(err) || task.CodeOf(err) == task.CodeServiceUnavailable {
		return err
	}
	return task.WithCode(task.CodeServiceUnavailable, fmt.Errorf("%w: %w", errDiskFull, err))
}

// noteWrite records the outcome of a write on the writer (a transaction,
// a heartbeat) for Probe: a write refused for disk full marks the store
// full from that instant, any write that succeeds clears the mark. It
// returns err unchanged. Heartbeats write every few seconds, so the mark
// follows the filesystem within a beat both ways.
func (s *Store) noteWrite(err error) error {
	switch {
	case err == nil:
		s.fullSince.Store(0)
	case isDiskFull(err):
		s.fullSince.CompareAndSwap(0, time.Now().UnixMilli())
	}
	return err
}

// fullErr is the error Probe reports while the store is marked full, nil
// otherwise.
func (s *Store) fullErr() error {
	ms := s.fullSince.Load()
	if ms == 0 {
		return nil
	}
	since := time.UnixMilli(ms).UTC().Format(time.RFC3339)
	return task.WithCode(task.CodeServiceUnavailable, fmt.Errorf("%w (writes refused since %s)", errDiskFull, since))
}
