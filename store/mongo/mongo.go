// Package mongo is the store.Store driver for MongoDB, through the official
// driver go.mongodb.org/mongo-driver/v2. It is the store for production and
// for several nodes: nodes coordinate only through the database (claims with
// leases, the unique fire ledger).
//
// Collections: meta (the health document, health.go), rows (scenario rows), time_task (canonical tasks, jobs
// among them), runs (the fire ledger), outbox, targets (_id the target id),
// and for the jobs API job_keys, job_moves and job_events (jobs.go). Times are stored as unix milliseconds (0 =
// unset), exactly as the SQLite driver keeps them, and come back in UTC.
// Row fields are a sub-document.
//
// # Without transactions
//
// The driver uses no multi-document transaction: FerretDB (what CI runs on)
// has none, and a single-node MongoDB has none either. Where the SQLite
// driver writes several records in one transaction, this driver checks
// first, then writes in an order that leaves a consistent state when it is
// interrupted between two steps (each method's comment says which), and lets
// unique indexes arbitrate races: the ledger key (task_id, slot, target), the
// run's trigger_id, the task's task_id, the row's (scenario, id), the
// outbox message's trigger key, and the _id of job_keys (a job's key) and
// of job_moves (a replaced job). Versions are compared and set (never $inc'ed)
// where an edit must not be lost.
//
// Claims are findOneAndUpdate calls, one per task, up to the limit. On
// MongoDB each is atomic; FerretDB v1 does not make them atomic under
// concurrency (see docs/DESIGN.md, "Storage").
//
// The package imports only task, store and the MongoDB driver.
package mongo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"cronsheet/store"
	"cronsheet/task"
)

var (
	_ store.Clock   = (*Store)(nil)
	_ store.Store   = (*Store)(nil)
	_ store.Control = (*Store)(nil)
	_ store.Jobs    = (*Store)(nil)
)

// Collection names.
const (
	collRows    = "rows"
	collTasks   = "time_task"
	collRuns    = "runs"
	collOutbox  = "outbox"
	collTargets = "targets"
	collNodes   = "nodes"

	collJobKeys   = "job_keys"
	collJobMoves  = "job_moves"
	collJobEvents = "job_events"
)

// Defaults of Config.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultConnectTimeout = 10 * time.Second
)

// Config says where the store lives and how it talks to the server.
type Config struct {
	// URI is the MongoDB connection string, e.g.
	// mongodb://db1,db2,db3/?replicaSet=rs0. Required.
	URI string
	// Database is the database name. Required.
	Database string
	// Timeout bounds every store call; default DefaultTimeout.
	Timeout time.Duration
	// ConnectTimeout bounds Open's connect, ping and index creation;
	// default DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// WriteConcernW1, when true, acknowledges writes on the primary alone
	// instead of the default majority write concern (a write that a
	// failover can roll back).
	WriteConcernW1 bool
	// RowCountCap bounds the counts of a web table page (store.RowPage
	// Total and Filtered): counting stops there and the page says Capped.
	// Default DefaultRowCountCap.
	RowCountCap int64
	// ReadNearest, when true, reads from the nearest member instead of the
	// default primary (reads may then be stale).
	ReadNearest bool
}

// Store is a store.Store backed by one MongoDB database. It is safe for
// concurrent use, also by several processes.
type Store struct {
	client  *mongo.Client
	db      *mongo.Database
	colls   *collections
	rows    *collection
	tasks   *collection
	runs    *collection
	outbox  *collection
	targets *collection
	nodes   *collection // _id the node id (nodes.go)
	// The jobs API's collections (jobs.go).
	jobKeys   *collection
	jobMoves  *collection
	jobEvents *collection
	timeout   time.Duration
	bulkMax   int // statements per bulk write
	now       func() time.Time
	// ferret is true on FerretDB (its planner takes no hints, and its
	// writes are serialised per collection: see collection).
	ferret bool
	// countCap bounds row counts (Config.RowCountCap).
	countCap int64
	// healthMu serialises this process's compare-and-sets of failure
	// records (targethealth.go), so that they do not retry on each other.
	healthMu sync.Mutex
	// sortable lists the row fields whose sort index exists (rowtable.go).
	sortable sortable
	// auditReady is set once the audit collection's index exists.
	auditReady atomic.Bool
	// pruneJobsChecked, when set (by tests only, export_test.go), is
	// called by pruneJobs between its check for live runs and its delete:
	// where a backfill's fire may come in.
	pruneJobsChecked func()
}

// Statements per bulk write. FerretDB v1 stops answering an update command
// of 50 statements on a collection of 500 documents, while 40 go through;
// MongoDB takes up to 100,000 per command.
const (
	defaultBulkMax = 1000
	ferretBulkMax  = 32
)

// Open connects to cfg.URI, pings the server and creates the indexes
// (creating them again changes nothing), all within cfg.ConnectTimeout. An
// unreachable server fails Open after that wait, with the server selection
// error. Close the Store when done.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.URI == "" {
		return nil, fmt.Errorf("open mongo store: %w", task.Invalid("uri", "required"))
	}
	if cfg.Database == "" {
		return nil, fmt.Errorf("open mongo store: %w", task.Invalid("database", "required"))
	}
	wait := cmp.Or(cfg.ConnectTimeout, DefaultConnectTimeout)
	opts := options.Client().ApplyURI(cfg.URI).
		SetServerSelectionTimeout(wait).
		SetConnectTimeout(wait).
		SetBSONOptions(&options.BSONOptions{DefaultDocumentM: true})
	opts.SetWriteConcern(writeconcern.Majority())
	if cfg.WriteConcernW1 {
		opts.SetWriteConcern(writeconcern.W1())
	}
	opts.SetReadPreference(readpref.Primary())
	if cfg.ReadNearest {
		opts.SetReadPreference(readpref.Nearest())
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("open mongo store %s: %w", redact(cfg.URI), err)
	}
	s := newStore(client, cfg)
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := client.Ping(ctx, readpref.Primary()); err != nil {
		err = fmt.Errorf("open mongo store %s: no server answered within %v: %w", redact(cfg.URI), wait, err)
		return nil, errors.Join(err, client.Disconnect(context.Background()))
	}
	info, err := s.ServerInfo(ctx)
	if err != nil {
		err = fmt.Errorf("open mongo store %s: %w", redact(cfg.URI), err)
		return nil, errors.Join(err, client.Disconnect(context.Background()))
	}
	if info.FerretDB {
		s.bulkMax = ferretBulkMax
		s.ferret = true
		s.colls.serial.Store(true) // see collection
	}
	if err := s.writeHealthDoc(ctx); err != nil {
		err = fmt.Errorf("open mongo store %s/%s: %w", redact(cfg.URI), cfg.Database, err)
		return nil, errors.Join(err, client.Disconnect(context.Background()))
	}
	if err := s.createIndexes(ctx); err != nil {
		err = fmt.Errorf("open mongo store %s/%s: %w", redact(cfg.URI), cfg.Database, err)
		return nil, errors.Join(err, client.Disconnect(context.Background()))
	}
	return s, nil
}

func newStore(client *mongo.Client, cfg Config) *Store {
	db := client.Database(cfg.Database)
	cs := newCollections(db)
	return &Store{
		client:  client,
		db:      db,
		colls:   cs,
		rows:    cs.get(collRows),
		tasks:   cs.get(collTasks),
		runs:    cs.get(collRuns),
		outbox:  cs.get(collOutbox),
		targets: cs.get(collTargets),
		nodes:   cs.get(collNodes),

		jobKeys:   cs.get(collJobKeys),
		jobMoves:  cs.get(collJobMoves),
		jobEvents: cs.get(collJobEvents),

		timeout:  cmp.Or(cfg.Timeout, DefaultTimeout),
		bulkMax:  defaultBulkMax,
		countCap: cmp.Or(cfg.RowCountCap, DefaultRowCountCap),
		now:      time.Now,
	}
}

// redact drops the user information of a connection string, for messages.
func redact(uri string) string {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return "(invalid uri)"
	}
	hosts, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(hosts, "@"); at >= 0 {
		hosts = "***@" + hosts[at+1:]
	}
	if path != "" {
		return scheme + "://" + hosts + "/" + path
	}
	return scheme + "://" + hosts
}

// Close disconnects from the server.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	return s.client.Disconnect(ctx)
}

// Database returns the name of the store's database.
func (s *Store) Database() string { return s.db.Name() }

// Drop removes the store's database with everything in it (tests use it).
func (s *Store) Drop(ctx context.Context) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	return s.db.Drop(ctx)
}

// ServerInfo reports what the server says about itself in buildInfo:
// its version and whether it is FerretDB.
type ServerInfo struct {
	Version  string
	FerretDB bool
}

// ServerInfo asks the server for its buildInfo.
func (s *Store) ServerInfo(ctx context.Context) (ServerInfo, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var info bson.M
	if err := s.db.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		return ServerInfo{}, fmt.Errorf("build info: %w", err)
	}
	out := ServerInfo{Version: fmt.Sprint(info["version"])}
	_, out.FerretDB = info["ferretdb"]
	if !out.FerretDB {
		_, out.FerretDB = info["ferretdbVersion"]
	}
	return out, nil
}

// call bounds one store call by the store's timeout.
func (s *Store) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// translate maps driver errors onto the task sentinels: no documents is
// task.ErrNotFound and a duplicate key is task.ErrConflict; the driver's
// message stays in the chain.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mongo.ErrNoDocuments):
		return fmt.Errorf("%w: %w", task.ErrNotFound, err)
	case isDuplicate(err):
		return fmt.Errorf("%w: %w", task.ErrConflict, err)
	}
	return err
}

// isDuplicate reports whether err is a unique index violation. MongoDB
// reports code 11000; FerretDB v1 uses that code for inserts and updates
// too, but its texts differ, so the message is checked as well.
func isDuplicate(err error) bool {
	if err == nil {
		return false
	}
	if mongo.IsDuplicateKeyError(err) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "duplicate key") || strings.Contains(msg, "e11000")
}

// nowMS is the store clock in unix milliseconds.
func (s *Store) nowMS() int64 { return s.now().UnixMilli() }

// findBatch is the batch size of every find: large enough that a find
// answers in its first reply. A cursor left open between batches costs
// little on MongoDB, but FerretDB v1 pins one of its PostgreSQL
// connections to it until it is exhausted or killed; when the client's
// deadline passed between batches, the driver could not kill it, and
// enough such cursors exhausted FerretDB's pool and stopped it answering
// anyone (seen with three nodes on one FerretDB; docs/FERRETDB.md).
const findBatch = 10000

// findOpts returns find options with the batch size of findBatch.
func findOpts() *options.FindOptionsBuilder { return options.Find().SetBatchSize(findBatch) }

// findAll decodes every document of cur into a slice of T. On an error
// the cursor is killed on the server with a fresh deadline (the caller's
// may be what ran out).
func findAll[T any](ctx context.Context, cur *mongo.Cursor, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	var out []T
	if err := cur.All(ctx, &out); err != nil {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = cur.Close(kctx)
		return nil, err
	}
	return out, nil
}

// ServerTime returns the server's clock, read from the hello command's
// localTime (millisecond precision; MongoDB and FerretDB both answer it).
func (s *Store) ServerTime(ctx context.Context) (time.Time, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var hello struct {
		LocalTime time.Time `bson:"localTime"`
	}
	if err := s.client.Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return time.Time{}, fmt.Errorf("read the server's time: %w", translate(err))
	}
	if hello.LocalTime.IsZero() {
		return time.Time{}, errors.New("read the server's time: hello has no localTime")
	}
	return hello.LocalTime.UTC(), nil
}
