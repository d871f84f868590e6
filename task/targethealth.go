package task

import (
	"strings"
	"time"
)

// TargetHealth is what the deliveries to a target, and its probe, found
// lately: the last success, the last failure with its error, and how
// many failures came in a row since the last success. Delivery attempts
// fill the top level; a target's periodic probe (TargetProbe) fills
// Probe, so that a probe's answer never hides failing deliveries.
type TargetHealth struct {
	HealthRecord
	// Probe is what the target's probe found; nil when it was never
	// probed.
	Probe *HealthRecord `json:"probe,omitempty"`
}

// HealthRecord is one source's outcomes at a target (deliveries or probes).
type HealthRecord struct {
	// LastSuccess is when the last successful attempt ended (zero: none).
	LastSuccess time.Time `json:"last_success,omitzero"`
	// LastFailure is when the last failed attempt ended, LastError its
	// error (zero, "": none).
	LastFailure time.Time `json:"last_failure,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	// FailuresInARow counts the failed attempts after the last success;
	// 0 when the last outcome was a success.
	FailuresInARow int `json:"failures_in_a_row"`
}

// Bounds of a target's probe.
const (
	MinProbeInterval = 10 * time.Second
	MaxProbeInterval = 24 * time.Hour
	MaxHealthError   = 1024 // bytes of a stored last error
)

// TargetProbe asks for a periodic probe of an HTTP target: every
// Interval one node sends Method to the target's host at Path (without a
// path, to the target's URL itself, which then must hold no template)
// and records the answer in the target's health (not as a run). An
// answer below 400 is a success.
type TargetProbe struct {
	// Interval is a Go duration ("1m"), from MinProbeInterval to
	// MaxProbeInterval.
	Interval string `json:"interval"`
	// Method is HEAD (the default) or GET.
	Method string `json:"method,omitempty"`
	// Path, when set, starts with '/' and replaces the path and query of
	// the target's URL; it holds no template.
	Path string `json:"path,omitempty"`
}

// Every returns the probe's interval (valid after Validate).
func (p *TargetProbe) Every() time.Duration {
	d, _ := time.ParseDuration(p.Interval)
	return d
}

// MethodOrDefault is the probe's method, HEAD when unset.
func (p *TargetProbe) MethodOrDefault() string {
	if p.Method == "" {
		return "HEAD"
	}
	return p.Method
}

// validateProbe checks t's probe (t is an HTTP target).
func (t *Target) validateProbe() error {
	p := t.Probe
	if t.Kind != ChannelHTTP {
		return Invalid("probe", "only an http target can be probed")
	}
	d, err := time.ParseDuration(p.Interval)
	switch {
	case p.Interval == "":
		return Invalid("probe.interval", "required: how often to probe, such as \"1m\"")
	case err != nil:
		return Invalid("probe.interval", "not a duration such as \"30s\" or \"5m\": %q", Truncate(p.Interval, 40))
	case d < MinProbeInterval || d > MaxProbeInterval:
		return Invalid("probe.interval", "must be %s to %s; got %s", MinProbeInterval, MaxProbeInterval, d)
	}
	if p.Method != "" && p.Method != "HEAD" && p.Method != "GET" {
		return Invalid("probe.method", "must be HEAD or GET; got %q", Truncate(p.Method, 20))
	}
	switch {
	case p.Path == "" && strings.Contains(t.HTTP.URL, "{{"):
		return Invalid("probe.path", "required when http.url holds a template: the probe sends no params")
	case p.Path == "":
	case !strings.HasPrefix(p.Path, "/") || len(p.Path) > MaxURL:
		return Invalid("probe.path", "must start with '/' and be at most %d characters", MaxURL)
	case strings.ContainsAny(p.Path, " \t\r\n#") || strings.Contains(p.Path, "{{"):
		return Invalid("probe.path", "no spaces, '#' or templates")
	}
	return nil
}
