package index_test

import (
	"strings"
	"testing"
	"time"

	"cronsheet/sink/index"
)

func TestExpand(t *testing.T) {
	t.Parallel()
	// 23:30 at UTC-5 is the next day in UTC.
	at := time.Date(2026, 12, 3, 23, 30, 0, 0, time.FixedZone("EST", -5*3600))
	tests := []struct {
		tmpl, service, want string
		fixed               bool
	}{
		{"cronsheet-{service}-{date}", index.ServiceJobs, "cronsheet-jobs-2026.12.04", false},
		{"cronsheet-{service}-{date}", index.ServiceTasks, "cronsheet-tasks-2026.12.04", false},
		{"events-{date}", index.ServiceFlows, "events-2026.12.04", false},
		{"{service}", index.ServiceFlows, "flows", false},
		{"cronsheet-job-events", index.ServiceTasks, "cronsheet-job-events", true},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl+"/"+tt.service, func(t *testing.T) {
			t.Parallel()
			tmpl, err := index.Parse(tt.tmpl)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.tmpl, err)
			}
			if got := tmpl.Expand(tt.service, at); got != tt.want {
				t.Errorf("Expand = %q, want %q", got, tt.want)
			}
			if tmpl.Fixed() != tt.fixed {
				t.Errorf("Fixed = %v, want %v", tmpl.Fixed(), tt.fixed)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct{ tmpl, want string }{
		{"cronsheet-{servcie}-{date}", "unknown placeholder {servcie}"},
		{"cronsheet-{month}", "unknown placeholder {month}"},
		{"cronsheet-{service", "unmatched brace"},
		{"cronsheet-}", "unmatched brace"},
		{"Cronsheet-{date}", "upper-case"},
		{"cronsheet events", `" " may not appear`},
		{"_cronsheet", "starts with"},
		{"", "empty"},
		{strings.Repeat("a", index.MaxLen+1), "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			t.Parallel()
			if _, err := index.Parse(tt.tmpl); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) = %v, want an error containing %q", tt.tmpl, err, tt.want)
			}
		})
	}
}
