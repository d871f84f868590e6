package server

import (
	"context"

	"cronsheet/jobs"
	"cronsheet/task"
)

// deadJobIDs returns the ids of the newest dead jobs, at most maxStatusIDs:
// the jobs service's dead list (every job whose state reads dead, as
// GET /api/v1/jobs?state=dead lists them), never nil.
func (s *Server) deadJobIDs(ctx context.Context) ([]string, error) {
	ids := []string{}
	if s.jobs == nil {
		return ids, nil
	}
	views, _, err := s.jobs.List(ctx, jobs.ListQuery{State: task.JobDead, Limit: maxStatusIDs})
	if err != nil {
		return ids, err
	}
	for _, v := range views {
		ids = append(ids, v.ID)
	}
	return ids, nil
}
