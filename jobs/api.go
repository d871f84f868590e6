package jobs

import (
	"time"

	"cronsheet/jobs/jobapi"
)

// The jobs API's wire contract (requests, views, answers) lives in
// jobs/jobapi, which the HTTP layer imports without the service and its
// delivery dependencies; these aliases let the service and its callers
// name those types as jobs.Request, jobs.View and so on.
type (
	// Request is jobapi.Request.
	Request = jobapi.Request
	// Built is jobapi.Built.
	Built = jobapi.Built
	// View is jobapi.View.
	View = jobapi.View
	// BatchResult is jobapi.BatchResult.
	BatchResult = jobapi.BatchResult
	// BackfillRequest is jobapi.BackfillRequest.
	BackfillRequest = jobapi.BackfillRequest
	// BackfillAnswer is jobapi.BackfillAnswer.
	BackfillAnswer = jobapi.BackfillAnswer
	// ListQuery is jobapi.ListQuery.
	ListQuery = jobapi.ListQuery
)

// Bounds of the jobs API (see jobapi).
const (
	MaxRequestBytes = jobapi.MaxRequestBytes
	MaxBatch        = jobapi.MaxBatch
	MaxBackfill     = jobapi.MaxBackfill
)

// ParseRequest is jobapi.ParseRequest.
func ParseRequest(data []byte) (Request, error) { return jobapi.ParseRequest(data) }

// ParseBatch is jobapi.ParseBatch.
func ParseBatch(data []byte) ([]Request, error) { return jobapi.ParseBatch(data) }

// Build is jobapi.Build.
func Build(r Request, id string, now time.Time) (Built, error) { return jobapi.Build(r, id, now) }
