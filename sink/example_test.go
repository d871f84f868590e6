package sink_test

import (
	"context"
	"log/slog"
	"time"

	"cronsheet/sink"
)

// The server wires a sink to the jobs service: every stored batch of
// transitions is published, and the sink is closed after the service.
func ExampleNewHTTP() {
	logger := slog.Default()
	s, err := sink.NewHTTP(logger, sink.HTTPConfig{URL: "http://127.0.0.1:9200/_bulk", Index: "cronsheet-job-events"})
	if err != nil {
		logger.Error("event sink", "error", err)
		return
	}
	// jobsService.OnEvents(s.Publish)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		logger.Warn("event sink", "error", err, "dropped", s.Dropped())
	}
}
