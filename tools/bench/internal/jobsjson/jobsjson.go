// Package jobsjson is the schema of the results jobs-bench writes with
// -json, which bench-compare reads.
package jobsjson

// Results are the whole file: every intake and lag measurement, and the
// pending case's when it ran.
type Results struct {
	Intake  []Intake `json:"intake"`
	Lag     []Lag    `json:"lag"`
	Pending *Pending `json:"pending,omitempty"`
}

// Intake is one intake measurement: jobs accepted per second through the
// jobs API, one per request or in batches.
type Intake struct {
	Name        string  `json:"name"`
	N           int     `json:"n"`
	Clients     int     `json:"clients"`
	PerRequest  int     `json:"per_request"`
	AcceptedPS  float64 `json:"accepted_per_s"`
	TookS       float64 `json:"took_s"`
	ArmedAfterS float64 `json:"armed_after_s"`
	Armed       int64   `json:"armed"`
	Errors      int64   `json:"errors"`
}

// Lag is one lag measurement: N jobs coming due, their fire and callback
// lags, and the memory they held while pending.
type Lag struct {
	N              int     `json:"n"`
	SpreadS        float64 `json:"spread_s"`
	WholeSeconds   bool    `json:"whole_seconds"`
	BudgetS        float64 `json:"budget_s"`
	ArmedBeforeDue int64   `json:"armed_before_due"`
	FireP50MS      float64 `json:"fire_p50_ms"`
	FireP99MS      float64 `json:"fire_p99_ms"`
	FireMaxMS      float64 `json:"fire_max_ms"`
	CallbackP50MS  float64 `json:"callback_p50_ms"`
	CallbackP99MS  float64 `json:"callback_p99_ms"`
	CallbackMaxMS  float64 `json:"callback_max_ms"`
	HeapPerJob     float64 `json:"heap_per_pending_job_bytes"`
	Fires          int     `json:"fires"`
	Calls          int64   `json:"calls"`
	CallSpanS      float64 `json:"call_span_s"`
	LastAfterDueS  float64 `json:"last_callback_after_first_due_s"`
	DrainCPUS      float64 `json:"drain_cpu_s"`
	LastOutcomeS   float64 `json:"last_outcome_after_first_due_s"`
	Errors         int64   `json:"errors"`
}

// Pending is the pending case: N jobs parked hours ahead, a due stream
// while they wait, and a restart.
type Pending struct {
	N             int     `json:"n"`
	SubmittedPS   float64 `json:"submitted_per_s"`
	ArmedAfterS   float64 `json:"armed_after_s"`
	Armed         int64   `json:"armed"`
	HeapPerJob    float64 `json:"heap_per_pending_job_bytes"`
	HeapBefore    uint64  `json:"heap_before_bytes"`
	HeapAfter     uint64  `json:"heap_after_bytes"`
	RSSBefore     int64   `json:"rss_before_bytes"`
	RSSAfter      int64   `json:"rss_after_bytes"`
	PeakRSS       int64   `json:"peak_rss_bytes"`
	DBBytes       int64   `json:"db_bytes"`
	WALBytes      int64   `json:"wal_bytes"`
	StreamJobs    int     `json:"stream_jobs"`
	StreamPS      int     `json:"stream_per_s"`
	StreamLate    int64   `json:"stream_accepted_late"`
	FireP50MS     float64 `json:"fire_p50_ms"`
	FireP99MS     float64 `json:"fire_p99_ms"`
	FireMaxMS     float64 `json:"fire_max_ms"`
	CallbackP50MS float64 `json:"callback_p50_ms"`
	CallbackP99MS float64 `json:"callback_p99_ms"`
	CallbackMaxMS float64 `json:"callback_max_ms"`
	Fires         int     `json:"fires"`
	Calls         int64   `json:"calls"`
	StopS         float64 `json:"stop_s"`
	RestartUpS    float64 `json:"restart_up_s"`
	Refused       int     `json:"restart_refused_starts"`
	FirstArmS     float64 `json:"restart_first_arm_s"`
	WindowArmedS  float64 `json:"restart_window_armed_s"`
	WindowArmed   int     `json:"window_armed"`
	AllArmedS     float64 `json:"restart_all_armed_s"`
	Rearmed       int64   `json:"rearmed"`
	Errors        int64   `json:"errors"`
}
