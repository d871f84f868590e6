package webtable

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/mapping/schedule"
	"cronsheet/task"
)

// Bounds of the preview's parameters.
const (
	defaultPreviewN = 5
	maxPreviewN     = 100
	maxWhenLen      = 1024 // bytes of `when`
	maxTZLen        = 64   // bytes of `tz`
)

// previewBody is the answer of GET /api/v1/schedule/preview.
type previewBody struct {
	// Canonical is the schedule's stored spelling.
	Canonical string `json:"canonical"`
	// Once is true for "at" and "in" schedules.
	Once bool `json:"once"`
	// Fires are the next instants after `from`, RFC 3339 in the schedule's zone.
	Fires []string `json:"fires"`
}

// preview handles GET /api/v1/schedule/preview?when=&tz=&n=&from=&scenario=:
// the canonical text and the next n fires after from (default now), with
// from as the anchor of intervals and "in" schedules. tz is the default zone
// (a "tz" suffix in when wins); with scenario, its aliases apply and its
// zone is the default instead of UTC.
func (a *API) preview(c *gin.Context) {
	q, err := a.previewQuery(c)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	s, err := q.parse()
	if err != nil {
		a.WriteError(c, err)
		return
	}
	fires := s.NextN(q.from, q.from, q.n)
	body := previewBody{Canonical: s.String(), Once: s.IsOnce(), Fires: make([]string, 0, len(fires))}
	for _, f := range fires {
		body.Fires = append(body.Fires, f.In(s.Location()).Format(time.RFC3339))
	}
	c.JSON(http.StatusOK, body)
}

// previewQuery is the preview's checked parameters.
type previewQuery struct {
	when string
	tz   string
	n    int
	from time.Time
	sc   *mapping.Scenario // nil when no scenario was named
}

// parse parses q.when, through the scenario's aliases when one was named.
// Errors name the field `when` and carry the parser's message.
func (q previewQuery) parse() (*schedule.Schedule, error) {
	if q.sc == nil {
		s, err := schedule.Parse(q.when, q.tz)
		if err != nil {
			return nil, task.Invalid("when", "%q: %s", task.Truncate(q.when, 64), err)
		}
		return s, nil
	}
	s, err := q.sc.ParseSchedule(q.when, q.tz)
	var ve *task.ValidationError
	if errors.As(err, &ve) {
		// Name the query parameter, not the scenario's row field.
		return nil, task.Invalid("when", "%s", ve.Msg)
	}
	return s, err
}

// previewQuery reads and checks the preview's query parameters, applying
// the scenario's aliases and zone when one is named.
func (a *API) previewQuery(c *gin.Context) (previewQuery, error) {
	q := previewQuery{when: c.Query("when"), tz: c.Query("tz")}
	switch {
	case q.when == "":
		return q, task.Invalid("when", "required, e.g. daily 08:30")
	case len(q.when) > maxWhenLen:
		return q, task.Invalid("when", "longer than %d bytes", maxWhenLen)
	case len(q.tz) > maxTZLen:
		return q, task.Invalid("tz", "longer than %d bytes", maxTZLen)
	}
	if q.tz != "" {
		// "Local" would depend on the machine; mapping refuses it too.
		if _, err := time.LoadLocation(q.tz); err != nil || strings.EqualFold(q.tz, "local") {
			return q, task.Invalid("tz", "%q is not an IANA time zone (like Asia/Shanghai)", q.tz)
		}
	}
	var err error
	if q.n, err = httpapi.IntQuery(c, "n", defaultPreviewN, 1, maxPreviewN); err != nil {
		return q, err
	}
	if q.from, err = httpapi.TimeQuery(c, "from"); err != nil {
		return q, err
	}
	if q.from.IsZero() {
		q.from = a.Now()
	}
	// The anchor ToTask would give a task edited at from, so the fires
	// shown are the exact instants.
	q.from = mapping.Anchor(q.from)
	if name := c.Query("scenario"); name != "" {
		if q.sc, err = a.scenario(name); err != nil {
			return q, err
		}
	}
	return q, nil
}
