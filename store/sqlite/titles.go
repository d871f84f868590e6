package sqlite

import (
	"context"
	"fmt"
	"strings"

	"cronsheet/store"
)

// TaskIDsByTitle returns the ids of the live tasks whose title param
// holds every word (store.Tasks.TaskIDsByTitle): a scan of time_task,
// which the runs page's title filter makes on a user's request only.
func (s *Store) TaskIDsByTitle(ctx context.Context, words []string, limit int) ([]string, error) {
	if err := store.CheckTitleQuery(words, limit); err != nil {
		return nil, err
	}
	where := make([]string, len(words))
	args := make([]any, 0, len(words)+1)
	for i, w := range words {
		where[i] = `instr(lower(coalesce(json_extract(doc, '$.params.title'), '')), lower(?)) > 0`
		args = append(args, w)
	}
	args = append(args, limit)
	q := `SELECT task_id FROM time_task WHERE deleted = 0 AND ` + strings.Join(where, " AND ") + ` LIMIT ?`
	rs, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("tasks by title: %w", translate(err))
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, fmt.Errorf("tasks by title: %w", err)
		}
		out = append(out, id)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("tasks by title: %w", err)
	}
	return out, nil
}
