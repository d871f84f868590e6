// Package server is cronsheet's composition root: from a configuration
// (package config) it opens the store and wires the executors (package
// executors/configured), the firer, the armer (package arming), the
// patrols and the HTTP API, runs them, and shuts them down gracefully in
// order (senders before receivers).
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"cronsheet/admission"
	"cronsheet/arming"
	"cronsheet/config"
	"cronsheet/declared"
	"cronsheet/fire"
	"cronsheet/flows"
	"cronsheet/intake"
	"cronsheet/jobs"
	"cronsheet/metrics"
	"cronsheet/patrol"
	"cronsheet/sink"
	"cronsheet/static"
	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// Server is a running cronsheet node.
type Server struct {
	fresh  freshConns // the HTTP connections with no request yet
	cfg    config.Config
	logger *slog.Logger
	store  store.Product
	firer  *fire.Firer
	armer  *arming.Armer
	runner *patrol.Runner
	// retention prunes the store; nil when retention.interval is 0.
	retention *patrol.Retention
	// probes sends the targets' periodic probes (patrol.Probe).
	probes *patrol.Probe
	// closers release the executors' clients after the firer stops.
	closers []func()
	jobs    *jobs.Service
	// lastErrors keeps the newest run errors for /api/v1/status.
	lastErrors errorRing
	admission  *admission.Controller
	cc         *ccSlots      // the cluster-wide slots of cc groups
	settings   *liveSettings // the store's live settings, applied here
	flows      *flows.Engine // nil when the store keeps no flows
	metrics    *metrics.Metrics
	socket     *intake.WebSocket
	kafkaIn    *intake.Kafka // nil unless jobs.kafka.brokers is set
	events     *sink.Sink    // nil unless events.kind is set
	nodes      *nodeRegistry
	clock      *storeClock // leases and heartbeats run on it
	ln         net.Listener
	http       *http.Server

	// missingAssets are the vendored files the pages lack; noPages
	// answers the pages when there are any (setMissingAssets).
	missingAssets []string
	noPages       http.Handler

	stopArm context.CancelFunc // cancels the armer's fires, once the firer stopped
	once    sync.Once
	runHook func(r task.Run) // WithRunObserver
	// fireHook and armHook are the armer's observers (WithFireObserver,
	// WithArmObserver); without fireHook, the fire lag goes to metrics.
	fireHook func(slot time.Time, lag time.Duration)
	armHook  func(taskID string)
	// slotClock is the time slots come due on (WithClock); nil: the host's.
	slotClock clockwork.Clock
	// declared is the file of config key declared, applied in Run before
	// serving; nil without one.
	declared *declared.File
}

// Option adjusts a Server at construction (benchmarks and tests).
type Option func(*Server)

// WithFireObserver calls f at the start of every scheduled fire with its
// slot and its lag (how long after the slot the fire began).
func WithFireObserver(f func(slot time.Time, lag time.Duration)) Option {
	return func(s *Server) { s.fireHook = f }
}

// WithArmObserver calls f each time a task is armed on this node.
func WithArmObserver(f func(taskID string)) Option {
	return func(s *Server) { s.armHook = f }
}

// WithRunObserver calls f after each stored change of a run on this node
// (a fire recorded, an attempt failed, an outcome stored); it must not
// block.
func WithRunObserver(f func(r task.Run)) Option {
	return func(s *Server) { s.runHook = f }
}

// WithClock runs the node's schedule on c: gocron waits on it, the armer
// and the firer read it (slots due, misfires, run deadlines) and the sync
// patrol anchors edited rows' schedules at its Now. Leases, heartbeats and
// the APIs stay on the host's and the store's clocks, so with an arming
// window a task parked far ahead is handed back at an instant of c that
// publish compares with the store's clock: a test that moves c far from
// the host's sets fire.arm_window 0. It is for tests that move a node's
// time (a clockwork.FakeClock across a DST night); a node runs on the
// host clock without it.
func WithClock(c clockwork.Clock) Option {
	return func(s *Server) { s.slotClock = c }
}

// WithStoreWrapper has the node use wrap(store) instead of the store its
// configuration opens: every part of the node (patrols, firer, APIs,
// jobs) reads and writes through it, and closing the node closes it. It
// is for tests that put a fault-injecting store (store/faulty) between a
// node and its driver; a node runs on its driver without it.
func WithStoreWrapper(wrap func(store.Product) store.Product) Option {
	return func(s *Server) { s.store = wrap(s.store) }
}

// slotNow is the Now of WithClock's clock, nil (the host clock) without it.
func (s *Server) slotNow() func() time.Time {
	if s.slotClock == nil {
		return nil
	}
	return s.slotClock.Now
}

// New builds a node from cfg and binds its listener; Run starts it.
func New(ctx context.Context, cfg config.Config, logger *slog.Logger, opts ...Option) (*Server, error) {
	st, err := openStore(ctx, cfg.Store)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, logger: logger, store: st}
	s.setMissingAssets(static.Missing(static.FS))
	for _, opt := range opts {
		opt(s) // before build: WithClock is built in
	}
	err = s.loadDeclared()
	if err == nil {
		err = s.firstAdmin(ctx)
	}
	if err == nil {
		err = s.build()
	}
	if err != nil {
		s.closeParts()
		_ = st.Close()
		return nil, err
	}
	if err := s.clock.measure(ctx); err != nil {
		s.closeBuilt()
		return nil, fmt.Errorf("read the store's clock: %w", err)
	}
	if err := s.nodes.register(ctx); err != nil {
		s.closeBuilt()
		return nil, fmt.Errorf("register node: %w", err)
	}
	s.cc.releaseAll(ctx) // a crashed predecessor's, if any
	s.releasePredecessorClaims(ctx)
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		_ = s.nodes.deregister(ctx)
		s.closeBuilt()
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	s.ln = ln
	if err := s.checkListener(); err != nil {
		_ = ln.Close()
		s.closeBuilt()
		return nil, err
	}
	return s, nil
}

// openStore opens the configured store and checks that it can serve the
// whole product (store.AsProduct): a driver that cannot is refused here,
// not answered 501 later.
func openStore(ctx context.Context, cfg config.Store) (store.Product, error) {
	st, err := openDriver(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p, err := store.AsProduct(st)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("store.driver %s: %w", cfg.Driver, err), st.Close())
	}
	return p, nil
}

func openDriver(ctx context.Context, cfg config.Store) (store.Store, error) {
	switch cfg.Driver {
	case "sqlite":
		st, err := sqlite.Open(ctx, cfg.Path)
		if err != nil {
			return nil, fmt.Errorf("open sqlite store %s: %w", cfg.Path, err)
		}
		return st, nil
	case "mongo":
		st, err := mongo.Open(ctx, mongo.Config{URI: cfg.URI, Database: cfg.Database,
			Timeout: cfg.Timeout, ConnectTimeout: cfg.ConnectTimeout,
			WriteConcernW1: cfg.WriteConcern == "1", ReadNearest: cfg.ReadPreference == "nearest"})
		if err != nil {
			return nil, fmt.Errorf("store.driver mongo: %w", err)
		}
		return st, nil
	default:
		return nil, fmt.Errorf("store.driver %q is not supported", cfg.Driver)
	}
}

// health probes the store (store.Prober: a ping and a read of a document
// the store wrote when it opened).
func (s *Server) health(ctx context.Context) error {
	_, err := s.store.Probe(ctx)
	return err
}

// Addr returns the address the API listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Run serves until ctx ends, then shuts down gracefully: stop taking HTTP
// requests, stop the patrols and the scheduler, let running deliveries
// finish within the shutdown timeout, release this node's claims so another
// node (or the next start) takes them at once, and close the store.
func (s *Server) Run(ctx context.Context) error {
	runCtx, stopPatrols := context.WithCancel(context.WithoutCancel(ctx))
	patrolsDone := make(chan struct{})
	go func() {
		defer close(patrolsDone)
		var wg sync.WaitGroup
		wg.Go(func() { s.armer.Run(runCtx) })
		wg.Go(func() { s.sweepJobs(runCtx) })
		wg.Go(func() { s.settings.poll(runCtx) })
		if s.retention != nil {
			wg.Go(func() { s.retention.Run(runCtx) })
		}
		wg.Go(func() { s.probes.Run(runCtx, s.cfg.Patrol.Interval) })
		if s.flows != nil {
			wg.Go(func() { s.flows.Run(runCtx) })
		}
		if s.kafkaIn != nil {
			wg.Go(func() {
				if err := s.kafkaIn.Run(runCtx); err != nil {
					s.logger.Error("jobs kafka intake", "error", err)
				}
			})
		}
		if m := s.cfg.Metrics; m.StatsdAddr != "" {
			wg.Go(func() {
				if err := s.metrics.PushStatsd(runCtx, metrics.StatsdConfig{Addr: m.StatsdAddr, Prefix: m.StatsdPrefix,
					Every: m.StatsdEvery, Node: s.cfg.NodeID}); err != nil {
					s.logger.Error("statsd push", "error", err)
				}
			})
		}
		s.runner.Run(runCtx)
		wg.Wait()
	}()
	s.applyDeclared(ctx)
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.http.Serve(s.ln) }()
	s.logger.InfoContext(ctx, "cronsheet started", "addr", s.Addr(), "node_id", s.cfg.NodeID,
		"store", s.cfg.Store.Driver)
	if len(s.missingAssets) > 0 {
		s.logger.ErrorContext(ctx, "the web pages have no assets: this binary was built without `make static` "+
			"(use make build); every page answers 503, the API works", "missing", s.missingAssets)
	}

	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
		err = fmt.Errorf("serve http: %w", err)
	case <-s.nodes.fence.lost:
		err = s.nodes.fence.lostErr()
	}
	s.logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if herr := shutdownHTTP(sctx, s.http, &s.fresh); herr != nil && err == nil {
		err = fmt.Errorf("shut down http: %w", herr)
	}
	s.socket.Close() // the upgraded connections http.Server.Shutdown leaves open
	stopPatrols()
	<-patrolsDone
	s.shutdown(sctx)
	return err
}

// onRun hears each stored change of a run from the firer: the jobs'
// transitions, a task run's end for the event sink, the metrics and the
// status page's last errors.
func (s *Server) onRun(t *task.Task, tg *task.Target, r task.Run) {
	s.jobs.OnRun(t, r)
	s.sendRunEnd(t, r)
	if s.flows != nil {
		s.flows.OnRun(t, r)
	}
	s.countRun(context.Background(), t, tg, r)
	if r.Error != "" && (r.State == task.RunFailed || r.State == task.RunDead) {
		s.lastErrors.add(r)
	}
	if s.runHook != nil {
		s.runHook(r)
	}
}

// startFlow and stopFlow serve the builtin start_flow and stop_flow.
func (s *Server) startFlow(ctx context.Context, flowID, triggerID, taskID string, params map[string]string) (string, error) {
	if s.flows == nil {
		return "", task.Permanent(errors.New("this store keeps no flows"))
	}
	x, err := s.flows.StartFired(ctx, flowID, triggerID, taskID, params)
	if err != nil {
		return "", err
	}
	return x.ID, nil
}

func (s *Server) stopFlow(ctx context.Context, flowID string) (int, error) {
	if s.flows == nil {
		return 0, task.Permanent(errors.New("this store keeps no flows"))
	}
	return s.flows.StopFlow(ctx, flowID)
}

// gate is the firer's flow control: this process's standing under its
// node id (nodeRegistry.standing), then a job's concurrency group (its FIFO
// on this node, then one of the group's slots in the store, so that the
// limit holds across nodes; the live settings may set the group's
// limit), then the callback host's rate limit (per node).
//
// Standing is checked before each wait and again after the last: a
// delivery that waited here while the process lost its node id (another
// process of the id took over; this one shuts down) takes no cc slot in
// the store under the lost id and calls no host, whatever it was handed
// during the shutdown. The waits themselves end once the id is lost
// (idFence.bind), rather than at the shutdown timeout.
func (s *Server) gate(ctx context.Context, t *task.Task, tg *task.Target) (func(), error) {
	if err := s.nodes.standing(ctx); err != nil {
		return nil, err // no delivery under a node id another process holds
	}
	var (
		req   admission.Request
		admit admission.Admit
	)
	if t.Job != nil {
		req.Group, req.Limit = t.Job.CC, s.settings.ccLimit(t.Job.CC, t.Job.CCLimit)
		if req.Limit > 0 {
			take := s.cc.admit(req.Group, req.Limit, t.TaskID)
			admit = func(ctx context.Context) (func(), error) {
				if err := s.nodes.standing(ctx); err != nil {
					return nil, err // waited in the group's FIFO here
				}
				return take(ctx)
			}
		}
	}
	if tg != nil && tg.HTTP != nil {
		req.Host = admission.HostOf(tg.HTTP.URL)
	}
	if req == (admission.Request{}) {
		return func() {}, nil
	}
	wctx, stop := s.nodes.fence.bind(ctx)
	defer stop()
	release, err := s.admission.AcquireWith(wctx, req, admit)
	if err != nil {
		if lost := s.nodes.fence.lostErr(); lost != nil {
			return nil, errors.Join(errNodeLost, lost)
		}
		return nil, err
	}
	if err := s.nodes.standing(ctx); err != nil {
		release()
		return nil, err // lost while waiting for a cc slot or a host token
	}
	return release, nil
}

// expireAccepted turns accepted runs whose feedback deadline passed into
// timeout, through the firer (which tells the runs' observers).
func (s *Server) expireAccepted(ctx context.Context) {
	for {
		n, err := s.firer.ExpireAccepted(ctx, expireBatch)
		if err != nil {
			if ctx.Err() == nil {
				s.logger.Error("expire accepted runs", "error", err)
			}
			return
		}
		if n < expireBatch {
			return
		}
	}
}

// expireBatch bounds the runs one fire.Firer.ExpireAccepted call times
// out.
const expireBatch = 500

// absenceWatchEvery is how often a node looks for expected slots that did
// not fire (fire.Firer.WatchAbsence); every node does, the ledger keeps
// each absence alert once.
const absenceWatchEvery = 5 * time.Second

// sweepJobs alerts on absent fires (every absenceWatchEvery), times out
// accepted runs past their deadline and counts the armed tasks, every
// second until ctx ends.
func (s *Server) sweepJobs(ctx context.Context) {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	var watched time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if time.Since(watched) >= absenceWatchEvery {
				watched = time.Now()
				if _, err := s.firer.WatchAbsence(ctx, s.cfg.Patrol.Batch); err != nil && ctx.Err() == nil {
					s.logger.Warn("absence watch", "error", err)
				}
			}
			s.expireAccepted(ctx)
			s.metrics.Armed(len(s.armer.Armed()))
		}
	}
}

// shutdown stops the scheduler and the firer, releases claims and closes the
// store. It is safe to call more than once.
func (s *Server) shutdown(ctx context.Context) {
	s.once.Do(func() {
		if err := s.armer.Shutdown(); err != nil {
			s.logger.Warn("armer", "error", err)
		}
		if err := s.firer.Shutdown(ctx); err != nil {
			s.logger.Warn("deliveries cut short by shutdown timeout", "error", err)
		}
		for _, c := range s.closers {
			c()
		}
		if s.jobs != nil {
			s.jobs.Close() // after the firer: its last transitions are stored
		}
		if s.events != nil {
			if err := s.events.Close(ctx); err != nil {
				s.logger.Warn("event sink", "error", err)
			}
		}
		s.stopArm()
		if err := s.nodes.fence.lostErr(); err != nil {
			// The claims, cc slots and registry entry under this node id
			// are the other process's now: nothing to release.
			s.closeStoreAfterLoss()
			return
		}
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// Deliveries released their cc slots as they ended; any row left
		// (a release the store refused) goes now, not after the lease.
		s.cc.releaseAll(rctx)
		// Every claim at once: one release per task outlasts this budget
		// at tens of thousands of armed tasks, and the node would then fail
		// to leave the registry too (its next start refused until the
		// entry lapses).
		if n, err := s.store.ReleaseClaims(rctx, s.cfg.NodeID); err != nil {
			s.logger.Warn("release claims; they lapse with their lease", "error", err)
		} else {
			s.logger.Info("released claims", "tasks", n)
		}
		// Gone from the registry, this node's unfinished runs (deliveries
		// cut short by the shutdown timeout) are taken over by the other
		// nodes at once, or by this node id's next start.
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer dcancel()
		if err := s.nodes.deregister(dctx); err != nil {
			s.logger.Warn("leave the node registry", "error", err)
		}
		if err := s.store.Close(); err != nil {
			s.logger.Warn("close store", "error", err)
		}
		s.logger.Info("stopped")
	})
}

// releasePredecessorClaims gives up, at once, the claims an earlier
// process of this node id left (a crash, or a stop whose release ran out
// of time): this process has armed nothing yet, and would otherwise renew
// their leases and have reconcile release them one transaction each (at
// a million claims, for hours). Publish claims and arms them again. A
// failure is logged; reconcile's release stays the fallback.
func (s *Server) releasePredecessorClaims(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	n, err := s.store.ReleaseClaims(rctx, s.cfg.NodeID)
	switch {
	case err != nil:
		s.logger.Warn("release an earlier process's claims; reconcile releases them instead", "error", err)
	case n > 0:
		s.logger.Info("released an earlier process's claims", "tasks", n)
	}
}

// closeBuilt releases what build made when New fails after it.
func (s *Server) closeBuilt() {
	_ = s.armer.Shutdown()
	s.stopArm()
	s.closeParts()
	_ = s.store.Close()
}

// closeParts releases the executors' clients, the jobs service and the
// event sink that build made, when the node never ran.
func (s *Server) closeParts() {
	for _, c := range s.closers {
		c()
	}
	if s.jobs != nil {
		s.jobs.Close()
	}
	if s.events != nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // nothing was sent: don't wait
		_ = s.events.Close(ctx)
	}
}
