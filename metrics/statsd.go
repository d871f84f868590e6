package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// maxPacket bounds one statsd datagram, to stay under a common Ethernet MTU.
const maxPacket = 1432

// dialTimeout bounds resolving the statsd address.
const dialTimeout = 10 * time.Second

// StatsdConfig says where and how [Metrics.PushStatsd] pushes.
type StatsdConfig struct {
	// Addr is the statsd server, UDP host:port.
	Addr string
	// Prefix begins every name (e.g. "cronsheet"); "" for none.
	Prefix string
	// Every is the push interval; it must be positive.
	Every time.Duration
	// Node, when set, is sent as the DogStatsD tag node:<Node> on every
	// line, so the figures of several nodes can be told apart.
	Node string
}

// PushStatsd sends the registry's figures to the statsd server at c.Addr
// every c.Every until ctx ends, then once more so the last counts are not
// lost, and returns nil. Each line is named prefix.metric[.label.value…],
// where metric is the Prometheus name without its "cronsheet_" namespace
// (so the default prefix "cronsheet" gives cronsheet.fires_total…, not a
// doubled cronsheet.cronsheet_fires_total), and characters other than
// letters, digits, '_' and '-' become '_':
//   - counters as "name:delta|c", the increase since the previous push
//     (unchanged counters are left out);
//   - gauges as "name:value|g";
//   - histograms and summaries as the gauges "name.count" and "name.sum".
//
// With c.Node set, each line ends in the tag "|#node:<node>".
//
// A failed push is counted in cronsheet_statsd_push_errors_total and does
// not stop the loop; PushStatsd returns an error only if it cannot start.
// On a nil *Metrics it returns nil at once.
func (m *Metrics) PushStatsd(ctx context.Context, c StatsdConfig) error {
	if m == nil {
		return nil
	}
	if c.Every <= 0 {
		return fmt.Errorf("push to statsd %s: interval %v must be positive", c.Addr, c.Every)
	}
	// Dial even if ctx has ended already, for the final push; resolving
	// the address gets its own timeout.
	dialCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dialTimeout)
	var d net.Dialer
	conn, err := d.DialContext(dialCtx, "udp", c.Addr)
	cancel()
	if err != nil {
		return fmt.Errorf("push to statsd: %w", err)
	}
	defer conn.Close()
	p := newStatsdPusher(c.Prefix, c.Node)
	tick := time.NewTicker(c.Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			m.pushOnce(p, conn)
			return nil
		case <-tick.C:
			m.pushOnce(p, conn)
		}
	}
}

func (m *Metrics) pushOnce(p *statsdPusher, conn net.Conn) {
	mfs, err := m.reg.Gather()
	if err != nil {
		m.pushErrors.Inc()
		return
	}
	if err := writePackets(conn, p.lines(mfs)); err != nil {
		m.pushErrors.Inc()
	}
}

// statsdPusher turns gathered metric families into statsd lines, keeping the
// counter values of the previous push to send deltas.
type statsdPusher struct {
	prefix string
	tags   string             // "|#node:…" or ""
	last   map[string]float64 // counter values at the previous push
}

func newStatsdPusher(prefix, node string) *statsdPusher {
	p := &statsdPusher{prefix: strings.TrimSuffix(prefix, "."), last: map[string]float64{}}
	if node != "" {
		p.tags = "|#node:" + sanitizeTag(node)
	}
	return p
}

// lines returns the statsd lines for mfs and remembers their counters.
// Counters gone from mfs are forgotten, so the memory follows the series.
func (p *statsdPusher) lines(mfs []*dto.MetricFamily) []string {
	var out []string
	seen := make(map[string]float64, len(p.last))
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			name := p.name(mf.GetName(), mt.GetLabel())
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				v := mt.GetCounter().GetValue()
				seen[name] = v
				delta := v - p.last[name]
				if delta < 0 { // the counter was reset
					delta = v
				}
				if delta != 0 {
					out = append(out, name+":"+formatFloat(delta)+"|c"+p.tags)
				}
			case dto.MetricType_GAUGE:
				out = appendGauge(out, name, mt.GetGauge().GetValue(), p.tags)
			case dto.MetricType_UNTYPED:
				out = appendGauge(out, name, mt.GetUntyped().GetValue(), p.tags)
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				h := mt.GetHistogram()
				out = appendGauge(out, name+".count", float64(h.GetSampleCount()), p.tags)
				out = appendGauge(out, name+".sum", h.GetSampleSum(), p.tags)
			case dto.MetricType_SUMMARY:
				s := mt.GetSummary()
				out = appendGauge(out, name+".count", float64(s.GetSampleCount()), p.tags)
				out = appendGauge(out, name+".sum", s.GetSampleSum(), p.tags)
			}
		}
	}
	p.last = seen
	return out
}

// name builds prefix.metric.label.value… for one series, metric being the
// Prometheus name without the Namespace prefix.
func (p *statsdPusher) name(metric string, labels []*dto.LabelPair) string {
	var b strings.Builder
	if p.prefix != "" {
		b.WriteString(p.prefix)
		b.WriteByte('.')
	}
	b.WriteString(sanitize(strings.TrimPrefix(metric, Namespace+"_")))
	for _, l := range labels {
		b.WriteByte('.')
		b.WriteString(sanitize(l.GetName()))
		b.WriteByte('.')
		b.WriteString(sanitize(l.GetValue()))
	}
	return b.String()
}

// appendGauge appends a gauge line, ending in tags ("" or "|#…"). statsd
// reads a signed value as a change, so a negative gauge is sent as 0
// followed by the (relative) value.
func appendGauge(out []string, name string, v float64, tags string) []string {
	if v < 0 {
		out = append(out, name+":0|g"+tags)
	}
	return append(out, name+":"+formatFloat(v)+"|g"+tags)
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// sanitize keeps letters, digits, '_' and '-', turning anything else
// (including the '.', ':' and '|' of the statsd syntax) into '_'. An empty
// string becomes "_".
func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// sanitizeTag is sanitize that also keeps '.', which DogStatsD allows in
// a tag value (node ids are often host names).
func sanitizeTag(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = sanitize(p)
	}
	return strings.Join(parts, ".")
}

// writePackets sends lines newline-separated, in datagrams of at most
// maxPacket bytes (a longer line goes alone). It tries every packet and
// returns the errors.
func writePackets(conn net.Conn, lines []string) error {
	var (
		errs []error
		buf  []byte
	)
	flush := func() {
		if len(buf) > 0 {
			if _, err := conn.Write(buf); err != nil {
				errs = append(errs, err)
			}
			buf = buf[:0]
		}
	}
	for _, l := range lines {
		if len(buf) > 0 && len(buf)+1+len(l) > maxPacket {
			flush()
		}
		if len(buf) > 0 {
			buf = append(buf, '\n')
		}
		buf = append(buf, l...)
	}
	flush()
	return errors.Join(errs...)
}
