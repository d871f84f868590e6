// Package sqlite is the embedded store.Store driver: one SQLite file in WAL
// mode through modernc.org/sqlite (pure Go) behind database/sql.
//
// It follows the measured patterns of docs/DESIGN.md, "Storage": one writer
// connection per process (every read-modify-write runs in BEGIN IMMEDIATE on
// it) plus a read pool; a claim is one UPDATE … RETURNING; the ledger gate is
// an insert that ignores a duplicate (task_id, slot, target); every patrol
// query is served by an index, and columns that claims or lease renewals
// rewrite are not indexed beyond what those queries need (see schema.go).
// Every query is prepared once, in Open (stmts.go), and a fire's writes can
// go in one transaction (RecordFire, FinishRun).
//
// Times are stored as unix milliseconds (0 = unset) and come back in UTC, so
// they keep millisecond precision. Row fields and the task document are JSON:
// numbers in Row.Fields come back as json.Number, exactly as written.
//
// The package imports only task, store and the SQLite driver.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"cronsheet/store"
	"cronsheet/task"
)

var (
	_ store.Store   = (*Store)(nil)
	_ store.Control = (*Store)(nil)
	_ store.Jobs    = (*Store)(nil)
)

// dsnParams are applied by the driver to every new connection.
const dsnParams = "_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000&_foreign_keys=0&_txlock=immediate"

// writerParams and readerParams are added for the writer's one connection
// and for each reader. The page cache (SQLite's default is 2 MiB) holds
// the B-tree pages a write transaction walks: at 100,000 jobs the runs
// table and its indexes outgrow 2 MiB, and with the default the writer
// reads a page from the file at every turn. The writer checkpoints every 10,000 pages of WAL (40 MiB)
// rather than 1,000, so a page rewritten by many commits in a row is
// copied into the database once (docs/BENCHMARKS.md, "Drain at 100,000").
const (
	writerParams = "&_pragma=cache_size(-65536)&_pragma=wal_autocheckpoint(10000)"
	readerParams = "&_pragma=cache_size(-16384)&_query_only=1"
)

// Store is a store.Store backed by one SQLite file. It is safe for
// concurrent use, also by several processes on the same file.
type Store struct {
	w   *sql.DB // the writer: one connection, every write goes here
	r   *sql.DB // the read pool
	st  stmts   // every query, prepared (stmts.go)
	now func() time.Time
	// stopHistory ends the history loop (history.go); historyDone is
	// closed when it has.
	stopHistory context.CancelFunc
	historyDone chan struct{}
	// fullSince is when writes began to fail for disk full (unix ms),
	// 0 while they do not (diskfull.go).
	fullSince atomic.Int64
}

// Open opens (creating when needed) the database file at path and its parent
// directory, checks that it runs in WAL mode, migrates a file of an older
// schema version, applies the schema (applying it again to an existing file
// changes nothing) and prepares every query. A file of a newer schema
// version is refused. Close the Store when done.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("open sqlite store: %w", task.Invalid("path", "must be a file path, got %q", path))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	dsn := "file:" + escapeURIPath(filepath.ToSlash(abs)) + "?" + dsnParams

	w, err := sql.Open("sqlite", dsn+writerParams)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{w: w, now: time.Now}
	if err := s.init(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	// The readers are opened after the writer has switched the file to WAL.
	r, err := sql.Open("sqlite", dsn+readerParams)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	s.r = r
	if err := s.st.prepare(ctx, w, r); err != nil {
		err = errors.Join(err, r.Close(), w.Close())
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	hctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stopHistory, s.historyDone = stop, make(chan struct{})
	go func() {
		defer close(s.historyDone)
		s.historyLoop(hctx)
	}()
	return s, nil
}

// escapeURIPath escapes the characters that end or escape the path of an
// SQLite URI filename.
func escapeURIPath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

// init checks the journal mode and, on the writer, in one write
// transaction (so two processes opening one file migrate it once): reads
// PRAGMA user_version, applies the migrations from there (schema.go),
// applies the schema and stamps user_version with schemaVersion. A fresh
// file (version 0) gets the schema as it is; a file of a newer version is
// refused rather than written with an older schema.
func (s *Store) init(ctx context.Context) error {
	var mode string
	if err := s.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal_mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal_mode is %q, want wal", mode)
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return fmt.Errorf("read user_version: %w", err)
		}
		if v > schemaVersion {
			return fmt.Errorf("schema version %d is newer than this build's %d", v, schemaVersion)
		}
		for from := v; from > 0 && from < schemaVersion; from++ {
			q := migrateFrom(from)
			if q == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("migrate schema from version %d: %w", from, err)
			}
		}
		if _, err := tx.ExecContext(ctx, schemaSQL); err != nil {
			return fmt.Errorf("apply schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, auditSchema); err != nil {
			return fmt.Errorf("apply audit schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, usersSchema); err != nil {
			return fmt.Errorf("apply users schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, ccSlotsSchema); err != nil {
			return fmt.Errorf("apply cc slots schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, settingsSchema); err != nil {
			return fmt.Errorf("apply settings schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, retentionSchema); err != nil {
			return fmt.Errorf("apply retention schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, targetHealthSchema); err != nil {
			return fmt.Errorf("apply target health schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, targetGuardSchema); err != nil {
			return fmt.Errorf("apply target guard schema: %w", err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
			return fmt.Errorf("stamp schema version: %w", err)
		}
		return nil
	})
}

// Close stops the history loop and closes the writer and the read pool, and with them every prepared
// statement: database/sql finalizes a connection's statements before it
// closes the connection (TestCloseReleasesFile checks that nothing stays
// open). The *sql.Stmt handles are deliberately not closed one by one, so
// that a call after Close fails with "sql: database is closed" rather than
// "statement is closed".
func (s *Store) Close() error {
	s.stopHistory()
	<-s.historyDone
	return errors.Join(s.r.Close(), s.w.Close())
}

// inTx runs fn in a write transaction (BEGIN IMMEDIATE, via _txlock) on the
// writer connection, committing when fn returns nil. A disk-full error,
// from fn or the commit, comes back coded unavailable (diskFull), and the
// outcome is noted for Probe.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.noteWrite(translate(err))
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return s.noteWrite(diskFull(err))
	}
	return s.noteWrite(translate(tx.Commit()))
}

// batchCtx returns ctx without its cancellation, for the statements of a
// transaction that writes a batch (a group commit of fires, outcomes or
// job events): the driver starts a goroutine per statement to watch a
// context that can end, and a burst of 10,000 fires ran tens of thousands
// of them, each woken twice, competing with the writer for the CPU. The
// batch still ends at ctx's deadline: database/sql rolls the transaction
// (begun with ctx) back and refuses its next statement, and the batch
// checks ctx between its records.
func batchCtx(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// translate maps driver errors onto the task sentinels: no rows is
// task.ErrNotFound, a unique or primary key clash is task.ErrConflict and
// SQLITE_FULL is coded unavailable (diskFull); the driver's message stays
// in the chain.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %w", task.ErrNotFound, err)
	}
	var se *msqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %w", task.ErrConflict, err)
		}
		return diskFull(err)
	}
	return err
}

// nowMS is the store clock in unix milliseconds.
func (s *Store) nowMS() int64 { return s.now().UnixMilli() }

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }
