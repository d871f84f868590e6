package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/admission"
	"cronsheet/api/auditapi"
	"cronsheet/api/docsapi"
	"cronsheet/api/flowsapi"
	"cronsheet/api/healthapi"
	"cronsheet/api/httpapi"
	"cronsheet/api/jobsapi"
	"cronsheet/api/outboxapi"
	"cronsheet/api/runsapi"
	"cronsheet/api/settingsapi"
	"cronsheet/api/statsapi"
	"cronsheet/api/targetsapi"
	"cronsheet/api/tasksapi"
	"cronsheet/arming"
	"cronsheet/builtin"
	"cronsheet/config"
	"cronsheet/executors/configured"
	"cronsheet/explain"
	"cronsheet/fire"
	"cronsheet/flows"
	"cronsheet/intake"
	"cronsheet/jobs"
	"cronsheet/mapping"
	"cronsheet/metrics"
	"cronsheet/patrol"
	"cronsheet/sink"
	"cronsheet/static"
	"cronsheet/store"
	"cronsheet/task"
	"cronsheet/webtable"
)

// built is what the steps of build hand each other.
type built struct {
	scenarios map[string]*mapping.Scenario
	execs     *configured.Executors
	table     *webtable.Table
	sync      *patrol.Sync // the runner's, also run for one row by the web table (a row switched off)
}

// build assembles the node from its configuration, in named steps; each
// needs the ones before it.
func (s *Server) build() error {
	var b built
	for _, step := range []func(*built) error{
		s.buildScenarios, s.buildDelivery, s.buildScheduler, s.buildPatrols, s.buildJobs, s.buildHTTP,
	} {
		if err := step(&b); err != nil {
			return err
		}
	}
	return nil
}

// buildScenarios reads the scenarios and the executors, and prepares the
// web table (its indexes are made before anything starts).
func (s *Server) buildScenarios(b *built) error {
	var err error
	if b.scenarios, err = s.scenarios(); err != nil {
		return err
	}
	if b.execs, err = configured.New(s.logger, s.store, s.cfg); err != nil {
		return err
	}
	s.closers = append(s.closers, b.execs.Close)
	b.table = webtable.NewTable(webtable.TableDeps{Logger: s.logger, Store: s.store, Scenarios: b.scenarios})
	if err := b.table.Prepare(context.Background()); err != nil {
		return fmt.Errorf("prepare the web table: %w", err)
	}
	return nil
}

// buildDelivery makes flow control, metrics, the store clock, the node
// registry and the firer.
func (s *Server) buildDelivery(b *built) error {
	cfg := s.cfg
	hosts := make(map[string]admission.HostLimit, len(cfg.Flow.Hosts))
	for h, l := range cfg.Flow.Hosts {
		hosts[h] = admission.HostLimit{Rate: l.Rate, Burst: l.Burst}
	}
	var err error
	if s.admission, err = admission.New(admission.Config{HostRate: cfg.Flow.HostRate, HostBurst: cfg.Flow.HostBurst, HostRates: hosts}); err != nil {
		return fmt.Errorf("flow: %w", err)
	}
	s.settings = &liveSettings{logger: s.logger, store: s.store, admission: s.admission, execs: b.execs}
	if err := s.settings.seed(context.Background(), cfg); err != nil {
		return err
	}
	s.metrics = metrics.New()
	s.metrics.SetQueueDepthFunc(func() map[string]int { return s.admission.Stats().QueueDepths() })
	s.clock = newStoreClock(s.logger, s.store, cfg.Patrol.Lease/4)
	s.cc = newCCSlots(s.logger, s.store, cfg.NodeID, cfg.Patrol.Lease, s.clock.Now)
	s.nodes = newNodeRegistry(s.logger, s.store, cfg.NodeID, cfg.Patrol.Lease, s.clock.Now, func() int { return len(s.armer.Armed()) })
	s.firer = fire.New(s.logger, fire.Config{
		Node: cfg.NodeID, BackoffBase: cfg.Fire.BackoffBase, BackoffMax: cfg.Fire.BackoffMax,
		OnRun: s.onRun, OnFire: s.onFire, Gate: s.gate, Standing: s.nodes.standing, Peers: s.nodes.peers,
		MaxDeliveries: cfg.Fire.Workers, Instance: s.nodes.instance,
	}, s.store, b.execs.Registry, s.slotNow())
	return nil
}

// buildScheduler makes the armer (and its gocron scheduler). Its
// observers read the hooks when called.
func (s *Server) buildScheduler(*built) error {
	onFire := func(slot time.Time, lag time.Duration) {
		if s.fireHook != nil {
			s.fireHook(slot, lag)
		} else {
			s.metrics.TriggerLag(lag)
		}
	}
	onArm := func(taskID string) {
		if s.armHook != nil {
			s.armHook(taskID)
		}
	}
	armCtx, stopArm := context.WithCancel(context.Background())
	var err error
	s.armer, err = arming.New(armCtx, s.logger, arming.Config{Node: s.cfg.NodeID, Window: s.cfg.Fire.ArmWindow,
		StopTimeout: s.cfg.ShutdownTimeout, OnFire: onFire, OnArm: onArm, Clock: s.slotClock}, s.firer, s.store)
	if err != nil {
		stopArm()
		return err
	}
	s.stopArm = stopArm
	return nil
}

// trigger fires taskID now, by hand or from a flow, with params.
func (s *Server) trigger(ctx context.Context, taskID string, tt task.TriggerType, params map[string]string) ([]*task.Run, error) {
	return s.firer.Trigger(ctx, fire.TriggerParams{TaskID: taskID, At: time.Now(), Type: tt, Params: params})
}

// buildPatrols makes the patrol runner: sync, publish, reconcile, renew,
// the heartbeat and the rescuer; the retention patrol; and the targets'
// probe patrol.
func (s *Server) buildPatrols(b *built) error {
	cfg := s.cfg
	mappers := make(map[string]patrol.Mapper, len(b.scenarios))
	for name, sc := range b.scenarios {
		mappers[name] = sc
	}
	p := cfg.Patrol
	b.sync = patrol.NewSync(s.logger, s.store, mappers, p.Batch, s.slotNow())
	reconcile := patrol.NewReconcile(s.logger, s.store, s.armer, cfg.NodeID, s.clock.Now)
	reconcile.ExpireOnlyWhen(s.nodes.judging)
	s.runner = patrol.NewRunner(s.logger, patrol.RunnerConfig{Interval: p.Interval, RenewEvery: p.Lease / 3,
		Observe: s.metrics.PatrolDuration, Beat: func(ctx context.Context) error {
			return errors.Join(s.clock.measure(ctx), s.nodes.beat(ctx), s.cc.renew(ctx))
		},
		Rescue: func(ctx context.Context) (int, error) { return s.firer.Rescue(ctx, p.Batch) }},
		b.sync,
		patrol.NewPublish(s.logger, s.store, s.armer, cfg.NodeID, p.Lease, p.Batch, s.clock.Now),
		reconcile,
		patrol.NewRenew(s.store, cfg.NodeID, p.Lease, s.clock.Now),
	)
	s.buildRetention()
	s.probes = patrol.NewProbe(s.logger, s.store, b.execs.Probe, nil)
	return nil
}

// buildJobs makes the jobs service, the event sink, the intake channels
// and the builtin executor (which needs the runner and flows).
func (s *Server) buildJobs(b *built) error {
	cfg := s.cfg
	s.jobs = jobs.New(jobs.Deps{Logger: s.logger, Store: s.store, Check: b.execs.CheckJob, Wake: s.runner.Wake, ArmWindow: cfg.Fire.ArmWindow,
		Trigger:   func(ctx context.Context, p fire.TriggerParams) ([]*task.Run, error) { return s.firer.Trigger(ctx, p) },
		Answering: s.firer.Answering})
	var err error
	if s.events, err = newSink(s.logger, cfg.Events); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	if s.events != nil {
		s.jobs.OnEvents(s.events.Publish)
		s.metrics.CountSinkEvents(s.events.Dropped)
	}
	s.jobs.OnEvents(func(evs []store.JobEvent) {
		for _, ev := range evs {
			s.metrics.JobTransition(string(ev.State))
		}
	})
	// The intake channels subscribe to the service before it is used.
	s.socket = intake.NewWebSocket(s.logger, s.jobs)
	if k := cfg.Jobs.Kafka; len(k.Brokers) > 0 {
		if s.kafkaIn, err = intake.NewKafka(s.logger, s.jobs, intake.KafkaConfig{Brokers: k.Brokers, Topic: k.Topic,
			ResultTopic: k.ResultTopic, Group: k.Group}); err != nil {
			return fmt.Errorf("jobs.kafka: %w", err)
		}
		s.closers = append(s.closers, s.kafkaIn.Close)
	}
	b.execs.Registry.Register(task.ChannelBuiltin, builtin.New(builtin.Deps{
		Logger: s.logger, Store: s.store, Wake: s.runner.Wake,
		Trigger: func(ctx context.Context, taskID string, params map[string]string) error {
			_, err := s.trigger(ctx, taskID, task.TriggerFlow, params)
			return err
		},
		Flows: &builtin.FlowFuncs{Start: s.startFlow, Stop: s.stopFlow},
	}))
	return nil
}

// buildHTTP makes the HTTP server: the guard, the API, the web table,
// flows, metrics, status and the pages.
func (s *Server) buildHTTP(b *built) error {
	engine := gin.New()
	guard, err := s.guard(engine)
	if err != nil {
		return err
	}
	engine.Use(httpapi.Middleware(s.logger)...)
	engine.Use(guard.Middleware())
	httpapi.RegisterNotFound(engine)
	httpapi.RegisterMethodNotAllowed(engine)
	guard.Register(engine)
	if err := s.registerAPI(engine, b); err != nil {
		return err
	}
	engine.GET("/metrics", gin.WrapH(s.metrics.Handler()))
	engine.GET("/api/v1/status", s.serveStatus)
	webtable.NewPages(static.FS).Register(engine.Group("/", s.pagesAvailable))
	s.http = &http.Server{
		Handler:           engine,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      httpapi.WriteTimeout, // above the longest job wait
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ConnState:         s.fresh.track,
	}
	return nil
}

// registerAPI mounts the web table and the REST API's handler packages
// on engine, each over the part of the node it needs, and the API's
// OpenAPI document.
func (s *Server) registerAPI(engine *gin.Engine, b *built) error {
	docs, err := docsapi.New()
	if err != nil {
		return err
	}
	docs.Register(engine)
	webtable.New(webtable.Deps{Logger: s.logger, Store: s.store, Scenarios: b.scenarios, Wake: s.runner.Wake,
		Sync: b.sync}).Register(engine)
	b.table.Register(engine)
	auditapi.New(s.logger, s.store, b.scenarios).Register(engine)
	tasksapi.New(tasksapi.Deps{Logger: s.logger, Store: s.store, Audit: s.store, Wake: s.runner.Wake,
		Trigger: func(ctx context.Context, taskID string, params map[string]string) ([]*task.Run, error) {
			return s.trigger(ctx, taskID, task.TriggerManual, params)
		},
		Explain: explain.New(explain.Deps{Store: s.store, CheckTarget: b.execs.CheckTarget,
			HostLimit: s.admission.Limit, Lease: s.cfg.Patrol.Lease, Now: s.slotNow()}).Explain,
	}).Register(engine)
	settingsapi.New(settingsapi.Deps{Logger: s.logger, Store: s.store, Audit: s.store, Check: s.settings.check,
		Applied: func(st *store.Settings) {
			if err := s.settings.apply(st); err != nil {
				s.logger.Error("live settings stored but not applied here; the next poll retries", "error", err)
			}
		}}).Register(engine)
	targetsapi.New(targetsapi.Deps{Logger: s.logger, Store: s.store, Audit: s.store, CheckTarget: b.execs.CheckTarget,
		PendingRows: s.pendingRowsUsing(b.scenarios)}).Register(engine)
	runsapi.New(runsapi.Deps{Logger: s.logger, Store: s.store, Feedback: s.firer, Audit: s.store,
		CancelRun: func(ctx context.Context, triggerID, why string) (*task.Run, error) {
			return s.firer.CancelRun(ctx, triggerID, why)
		},
	}).Register(engine)
	outboxapi.New(s.logger, s.store).Register(engine)
	statsapi.New(s.logger, s.store, nil).Register(engine)
	healthapi.New(s.health).Register(engine)
	jobsapi.New(jobsapi.Deps{Logger: s.logger, Jobs: s.jobs, Socket: s.socket, Audit: s.store}).Register(engine)
	observer := &flowEvents{metrics: s.metrics.NewFlowMetrics(), sink: s.events}
	fcfg := flows.Config{Wake: s.runner.Wake, Observer: observer, CancelAccepted: s.firer.CancelAccepted}
	s.flows = flows.New(s.logger, fcfg, s.store, func(ctx context.Context, id string, at time.Time, p map[string]string) ([]*task.Run, error) {
		return s.firer.Trigger(ctx, fire.TriggerParams{TaskID: id, At: at, Type: task.TriggerFlow, Params: p})
	})
	flowsapi.New(s.logger, s.store, s.flows, s.store).Register(engine)
	return nil
}

func (s *Server) scenarios() (map[string]*mapping.Scenario, error) {
	cfgs := s.cfg.ScenarioConfigs()
	out := make(map[string]*mapping.Scenario, len(cfgs))
	for i, c := range cfgs {
		sc, err := mapping.New(c)
		if err != nil {
			return nil, fmt.Errorf("scenarios[%d]: %w", i, err)
		}
		out[sc.Name()] = sc
	}
	return out, nil
}

// newSink builds the lifecycle event sink; nil when events.kind is "".
func newSink(logger *slog.Logger, c config.Events) (*sink.Sink, error) {
	switch c.Kind {
	case "http":
		return sink.NewHTTP(logger, sink.HTTPConfig{URL: c.URL, Index: c.Index, Timeout: c.Timeout})
	case "kafka":
		return sink.NewKafka(logger, sink.KafkaConfig{Brokers: c.Brokers, Topic: c.Topic, Timeout: c.Timeout})
	}
	return nil, nil
}
