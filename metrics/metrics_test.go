package metrics

import (
	"context"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// record fills m with one known set of figures.
func record(m *Metrics) {
	m.Fired("http", "schedule")
	m.Fired("http", "schedule")
	m.Fired("kafka", "manual")
	m.TriggerLag(5 * time.Millisecond)
	m.Outcome("http", "done")
	m.Outcome("http", "dead")
	m.Outcome("http", "done")
	m.PatrolDuration("claim", 20*time.Millisecond)
	m.JobTransition("running")
	m.Armed(3)
	m.QueueDepth("a", 2)
	m.QueueDepth("gone", 4)
	m.QueueDepth("gone", 0)
	m.SetQueueDepthFunc(func() map[string]int { return map[string]int{"a": 7, "b": 5} })
}

// scrape returns the handler's text output, parsed.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return mfs
}

// series finds the metric of family name whose labels are exactly labels
// (name=value pairs), or fails.
func series(t *testing.T, mfs map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	t.Helper()
	mf := mfs[name]
	if mf == nil {
		t.Fatalf("no family %s", name)
	}
	for _, m := range mf.GetMetric() {
		var got []string
		for _, l := range m.GetLabel() {
			got = append(got, l.GetName()+"="+l.GetValue())
		}
		if slices.Equal(got, labels) {
			return m
		}
	}
	t.Fatalf("no series %s%v in %v", name, labels, mf.GetMetric())
	return nil
}

func TestHandler(t *testing.T) {
	t.Parallel()
	m := New()
	record(m)
	mfs := scrape(t, m.Handler())

	counters := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cronsheet_fires_total", []string{"kind=http", "trigger_type=schedule"}, 2},
		{"cronsheet_fires_total", []string{"kind=kafka", "trigger_type=manual"}, 1},
		{"cronsheet_run_outcomes_total", []string{"kind=http", "state=done"}, 2},
		{"cronsheet_run_outcomes_total", []string{"kind=http", "state=dead"}, 1},
		{"cronsheet_job_transitions_total", []string{"state=running"}, 1},
	}
	for _, c := range counters {
		if got := series(t, mfs, c.name, c.labels...).GetCounter().GetValue(); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}

	gauges := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cronsheet_armed_tasks", nil, 3},
		{"cronsheet_queue_depth", []string{"group=a"}, 7}, // the func wins
		{"cronsheet_queue_depth", []string{"group=b"}, 5},
	}
	for _, g := range gauges {
		if got := series(t, mfs, g.name, g.labels...).GetGauge().GetValue(); got != g.want {
			t.Errorf("%s%v = %v, want %v", g.name, g.labels, got, g.want)
		}
	}
	if n := len(mfs["cronsheet_queue_depth"].GetMetric()); n != 2 {
		t.Errorf("queue depth series = %d, want 2 (a zero depth is dropped)", n)
	}

	lag := series(t, mfs, "cronsheet_trigger_lag_seconds").GetHistogram()
	if lag.GetSampleCount() != 1 || lag.GetSampleSum() != 0.005 {
		t.Errorf("trigger lag count/sum = %d/%v, want 1/0.005", lag.GetSampleCount(), lag.GetSampleSum())
	}
	for _, b := range lag.GetBucket() {
		want := uint64(0)
		if b.GetUpperBound() >= 0.005 {
			want = 1
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("trigger lag bucket le=%v = %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	var bounds []float64
	for _, b := range lag.GetBucket() {
		if !math.IsInf(b.GetUpperBound(), 1) {
			bounds = append(bounds, b.GetUpperBound())
		}
	}
	if bounds[0] != 0.001 || bounds[len(bounds)-1] != 10 {
		t.Errorf("trigger lag buckets = %v, want 0.001..10", bounds)
	}
	patrol := series(t, mfs, "cronsheet_patrol_duration_seconds", "patrol=claim").GetHistogram()
	if patrol.GetSampleCount() != 1 || patrol.GetSampleSum() != 0.02 {
		t.Errorf("patrol duration count/sum = %d/%v, want 1/0.02", patrol.GetSampleCount(), patrol.GetSampleSum())
	}
}

func TestRegistriesAreSeparate(t *testing.T) {
	t.Parallel()
	a, b := New(), New()
	a.Armed(1)
	b.Armed(2)
	if got := series(t, scrape(t, a.Handler()), "cronsheet_armed_tasks").GetGauge().GetValue(); got != 1 {
		t.Errorf("a: armed = %v, want 1", got)
	}
}

func TestNilMetricsDoesNothing(t *testing.T) {
	t.Parallel()
	var m *Metrics
	record(m) // must not panic
	m.SetQueueDepthFunc(nil)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil Handler: status %d, want 404", rec.Code)
	}
	if err := m.PushStatsd(t.Context(), StatsdConfig{Addr: "127.0.0.1:1", Prefix: "x", Every: time.Second}); err != nil {
		t.Errorf("nil PushStatsd: %v", err)
	}
}

func TestStatsdLines(t *testing.T) {
	t.Parallel()
	m := New()
	record(m)
	m.QueueDepth("we.ird|grp:", 1)
	p := newStatsdPusher("app.", "")
	gather := func() []string {
		t.Helper()
		mfs, err := m.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		return p.lines(mfs)
	}

	first := gather()
	for _, want := range []string{
		"app.fires_total.kind.http.trigger_type.schedule:2|c",
		"app.fires_total.kind.kafka.trigger_type.manual:1|c",
		"app.run_outcomes_total.kind.http.state.done:2|c",
		"app.job_transitions_total.state.running:1|c",
		"app.armed_tasks:3|g",
		"app.queue_depth.group.a:7|g",
		"app.queue_depth.group.we_ird_grp_:1|g",
		"app.trigger_lag_seconds.count:1|g",
		"app.trigger_lag_seconds.sum:0.005|g",
		"app.patrol_duration_seconds.patrol.claim.count:1|g",
		"app.patrol_duration_seconds.patrol.claim.sum:0.02|g",
	} {
		if !slices.Contains(first, want) {
			t.Errorf("first push lacks %q; got\n%s", want, strings.Join(first, "\n"))
		}
	}
	if slices.ContainsFunc(first, func(l string) bool { return strings.Contains(l, "statsd_push_errors") }) {
		t.Errorf("a counter at 0 was sent: %v", first)
	}

	// Counters go as deltas: unchanged ones are left out.
	m.Fired("http", "schedule")
	second := gather()
	if want := "app.fires_total.kind.http.trigger_type.schedule:1|c"; !slices.Contains(second, want) {
		t.Errorf("second push lacks %q; got %v", want, second)
	}
	for _, l := range second {
		if strings.HasSuffix(l, "|c") && !strings.Contains(l, "kind.http.trigger_type.schedule") {
			t.Errorf("unchanged counter sent again: %q", l)
		}
	}
	if !slices.Contains(second, "app.armed_tasks:3|g") {
		t.Errorf("gauges are sent every time; got %v", second)
	}
}

func TestStatsdNegativeGauge(t *testing.T) {
	t.Parallel()
	got := appendGauge(nil, "x", -2.5, "|#node:n1")
	if want := []string{"x:0|g|#node:n1", "x:-2.5|g|#node:n1"}; !slices.Equal(got, want) {
		t.Errorf("appendGauge(-2.5) = %v, want %v", got, want)
	}
}

// listen returns a local UDP listener and a channel of the lines it receives.
func listen(t *testing.T) (string, <-chan string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			for l := range strings.SplitSeq(string(buf[:n]), "\n") {
				select {
				case lines <- l:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return pc.LocalAddr().String(), lines
}

// expectLine reads lines until want arrives; the timeout is a safety net.
func expectLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l := <-lines:
			if l == want {
				return
			}
		case <-timeout:
			t.Fatalf("never received %q", want)
		}
	}
}

func TestPushStatsd(t *testing.T) {
	t.Parallel()

	t.Run("FlushesWhenContextEnds", func(t *testing.T) {
		t.Parallel()
		addr, lines := listen(t)
		m := New()
		record(m)
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { errc <- m.PushStatsd(ctx, StatsdConfig{Addr: addr, Prefix: "cs", Every: time.Hour}) }()
		cancel()
		if err := <-errc; err != nil {
			t.Fatalf("PushStatsd: %v", err)
		}
		expectLine(t, lines, "cs.fires_total.kind.http.trigger_type.schedule:2|c")
		expectLine(t, lines, "cs.trigger_lag_seconds.count:1|g")
	})

	t.Run("PushesEveryInterval", func(t *testing.T) {
		t.Parallel()
		addr, lines := listen(t)
		m := New()
		m.Armed(4)
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { errc <- m.PushStatsd(ctx, StatsdConfig{Addr: addr, Prefix: "cs", Every: 5 * time.Millisecond}) }()
		expectLine(t, lines, "cs.armed_tasks:4|g")
		m.Outcome("sms", "done")
		expectLine(t, lines, "cs.run_outcomes_total.kind.sms.state.done:1|c")
		cancel()
		if err := <-errc; err != nil {
			t.Fatalf("PushStatsd: %v", err)
		}
	})

	t.Run("RejectsBadInterval", func(t *testing.T) {
		t.Parallel()
		if err := New().PushStatsd(t.Context(), StatsdConfig{Addr: "127.0.0.1:8125"}); err == nil {
			t.Error("interval 0: want an error")
		}
	})
}

func TestWritePacketsSplits(t *testing.T) {
	t.Parallel()
	client, server := net.Pipe()
	defer client.Close()
	long := strings.Repeat("x", 1000) + ":1|g"
	got := make(chan []string, 1)
	go func() {
		var packets []string
		buf := make([]byte, 4096)
		for {
			n, err := server.Read(buf)
			if err != nil {
				got <- packets
				return
			}
			packets = append(packets, string(buf[:n]))
		}
	}()
	if err := writePackets(client, []string{long, long, "a:1|c"}); err != nil {
		t.Fatal(err)
	}
	client.Close()
	packets := <-got
	if len(packets) != 2 || packets[0] != long || packets[1] != long+"\na:1|c" {
		t.Errorf("packets = %d %q…, want [long] [long\\na:1|c]", len(packets), packets)
	}
	for _, p := range packets {
		if len(p) > maxPacket {
			t.Errorf("packet of %d bytes > %d", len(p), maxPacket)
		}
	}
}

// TestPushStatsdNamesAndNodeTag reads what a push sends to a real local UDP
// socket with the default prefix "cronsheet": every name is cronsheet.<metric>
// (the Prometheus namespace is not repeated) and every line carries the
// node's tag.
func TestPushStatsdNamesAndNodeTag(t *testing.T) {
	t.Parallel()
	addr, lines := listen(t)
	m := New()
	record(m)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		errc <- m.PushStatsd(ctx, StatsdConfig{Addr: addr, Prefix: "cronsheet", Every: time.Hour, Node: "node-1.example"})
	}()
	cancel() // the final push
	if err := <-errc; err != nil {
		t.Fatalf("PushStatsd: %v", err)
	}
	want := []string{
		"cronsheet.fires_total.kind.http.trigger_type.schedule:2|c|#node:node-1.example",
		"cronsheet.armed_tasks:3|g|#node:node-1.example",
		"cronsheet.run_outcomes_total.kind.http.state.done:2|c|#node:node-1.example",
		"cronsheet.trigger_lag_seconds.count:1|g|#node:node-1.example",
	}
	var got []string
	timeout := time.After(30 * time.Second)
	for slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(got, w) }) { // until all arrived
		select {
		case l := <-lines:
			got = append(got, l)
		case <-timeout:
			t.Fatalf("push lacks some of\n%s\ngot\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	}
	for _, l := range got {
		if !strings.HasPrefix(l, "cronsheet.") || strings.HasPrefix(l, "cronsheet.cronsheet") {
			t.Errorf("line %q: want the name cronsheet.<metric>", l)
		}
		if !strings.HasSuffix(l, "|#node:node-1.example") {
			t.Errorf("line %q: no node tag", l)
		}
	}
}

// TestExpositionLint runs promlint (the checks of promtool check metrics)
// over the /metrics output with every metric family present.
func TestExpositionLint(t *testing.T) {
	t.Parallel()
	m := New()
	record(m)
	m.pushErrors.Inc()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, name := range []string{"fires_total", "trigger_lag_seconds", "run_outcomes_total", "patrol_duration_seconds",
		"job_transitions_total", "armed_tasks", "queue_depth", "statsd_push_errors_total"} {
		if !strings.Contains(body, "# TYPE cronsheet_"+name+" ") {
			t.Errorf("exposition lacks cronsheet_%s", name)
		}
	}
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatalf("promlint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}
