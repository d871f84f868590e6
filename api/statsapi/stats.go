package statsapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/task"
)

// Defaults and bounds of the stats endpoints.
const (
	defaultStatsWindow = 24 * time.Hour
	defaultStatsBucket = 5 * time.Minute
	defaultUpcoming    = 24 * time.Hour
	maxUpcomingWithin  = 7 * 24 * time.Hour
)

// durationQuery reads an optional duration query parameter ("90s", "5m",
// "24h", "7d"), in [lo, hi]; def when absent.
func durationQuery(c *gin.Context, name string, def, lo, hi time.Duration) (time.Duration, error) {
	s := c.Query(name)
	if s == "" {
		return def, nil
	}
	bad := task.Invalid(name, "must be a duration such as 5m, 24h or 7d, from %s to %s", lo, hi)
	if len(s) > 32 {
		return 0, bad
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 366 {
			return 0, bad
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, bad
		}
	}
	if d < lo || d > hi {
		return 0, bad
	}
	return d, nil
}

// fireStatsAnswer is the answer of GET /api/v1/stats/fires.
type fireStatsAnswer struct {
	*store.FireStats
	BucketSeconds int64 `json:"bucket_seconds"`
}

// fireStats serves GET /api/v1/stats/fires?window=24h&bucket=5m: the runs
// fired in the window ending now, per bucket (fires, failures, lag p99),
// from the runs ledger. The window is at most 7 days, a bucket at least 1s,
// at most 288 buckets; the window starts on a bucket boundary, so the
// newest bucket holds now.
func (a *API) fireStats(c *gin.Context) {
	window, err := durationQuery(c, "window", defaultStatsWindow, time.Minute, store.MaxStatsWindow)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	bucket, err := durationQuery(c, "bucket", defaultStatsBucket, time.Second, window)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	if n := (window + bucket - 1) / bucket; n > store.MaxStatsBuckets {
		a.WriteError(c, task.Invalid("bucket", "makes %d buckets of the window, more than %d", n, store.MaxStatsBuckets))
		return
	}
	to := a.Now().UTC().Truncate(bucket).Add(bucket) // the end of the bucket holding now
	st, err := a.store.FireStats(c.Request.Context(), store.FireStatsParams{From: to.Add(-window), To: to, Bucket: bucket})
	if err != nil {
		a.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, fireStatsAnswer{FireStats: st, BucketSeconds: int64(bucket / time.Second)})
}

// upcomingFire is a fire due soon with its task's title, so the timeline
// names the task rather than shows its id.
type upcomingFire struct {
	store.UpcomingFire
	// TaskTitle is the task's title (task.Task.Title); "" when it has none.
	TaskTitle string `json:"task_title,omitempty"`
}

// withTitles returns fires with their tasks' titles, read in one batch.
func (a *API) withTitles(ctx context.Context, fires []store.UpcomingFire) ([]upcomingFire, error) {
	ids := make([]string, len(fires))
	for i, f := range fires {
		ids[i] = f.TaskID
	}
	titles, err := httpapi.TaskTitles(ctx, a.store, ids)
	if err != nil {
		return nil, err
	}
	out := make([]upcomingFire, len(fires))
	for i, f := range fires {
		out[i] = upcomingFire{UpcomingFire: f, TaskTitle: titles[f.TaskID]}
	}
	return out, nil
}

// upcomingAnswer is the answer of GET /api/v1/stats/upcoming.
type upcomingAnswer struct {
	From  time.Time      `json:"from"`
	To    time.Time      `json:"to"`
	Fires []upcomingFire `json:"fires"`
	// More says the limit cut the list short.
	More bool `json:"more"`
}

// upcoming serves GET /api/v1/stats/upcoming?within=24h&limit=500: the
// next fires of the enabled tasks within the coming hours, soonest first
// (within at most 7 days, limit 1 to 500).
func (a *API) upcoming(c *gin.Context) {
	within, err := durationQuery(c, "within", defaultUpcoming, time.Minute, maxUpcomingWithin)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	limit, err := httpapi.IntQuery(c, "limit", store.MaxUpcoming, 1, store.MaxUpcoming)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	now := a.Now().UTC()
	fires, err := a.store.UpcomingFires(c.Request.Context(), now, now.Add(within), limit)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	views, err := a.withTitles(c.Request.Context(), fires)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	c.JSON(http.StatusOK, upcomingAnswer{From: now, To: now.Add(within), Fires: views, More: len(fires) == limit})
}
