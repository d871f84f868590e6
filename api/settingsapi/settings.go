// Package settingsapi serves the live settings (store.Settings): host rate
// limits, the callback allow and deny lists and cc group limits.
//
//	GET /api/v1/settings → 200 the settings (ETag: their version)
//	PUT /api/v1/settings → 200 the settings as stored (If-Match or the
//	                       body's version required; 409 when stale; 400
//	                       naming the field when invalid)
//
// Viewers read them; only admins write them (authapi.Policy). Every
// change is audited (kind store.AuditKindSettings). It imports store,
// task and httpapi, never a driver, executors, admission or server: the
// server hands it the host-list check and what to do once stored.
package settingsapi

import (
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/task"
)

// Deps are the dependencies of the settings API.
type Deps struct {
	// Logger receives the 500s; nil discards them.
	Logger *slog.Logger
	// Store keeps the settings. Required.
	Store store.SettingsStore
	// Audit records every change; nil records nothing.
	Audit store.AuditLog
	// Now is the clock of the audit records; nil = time.Now.
	Now func() time.Time
	// Check checks what store.Settings.Validate leaves to the host guard
	// (the allow and deny entries); nil checks nothing. A
	// *task.ValidationError names its field.
	Check func(*store.Settings) error
	// Applied is told of settings just stored, to apply them on this node
	// at once (the others poll the store); nil does nothing.
	Applied func(*store.Settings)
}

// API is the settings API's handler set.
type API struct {
	httpapi.Base
	store   store.SettingsStore
	check   func(*store.Settings) error
	applied func(*store.Settings)
}

// New returns the settings API over d. It panics when d.Store is nil, a
// wiring bug.
func New(d Deps) *API {
	a := &API{
		Base:    httpapi.NewBase("settingsapi", d.Logger, d.Audit, d.Now),
		store:   httpapi.Require("settingsapi", "Deps.Store", d.Store),
		check:   d.Check,
		applied: d.Applied,
	}
	if a.check == nil {
		a.check = func(*store.Settings) error { return nil }
	}
	if a.applied == nil {
		a.applied = func(*store.Settings) {}
	}
	return a
}

// Register mounts GET and PUT /api/v1/settings on r.
func (a *API) Register(r gin.IRouter) {
	r.GET("/api/v1/settings", a.getSettings)
	r.PUT("/api/v1/settings", a.putSettings)
}

// settingsBody is the body of PUT /api/v1/settings: the whole record, as
// GET answers it (version is the If-Match; updated_at and updated_by are
// the server's and ignored).
type settingsBody struct {
	HostRate  float64                    `json:"host_rate"`
	HostBurst int                        `json:"host_burst"`
	Hosts     map[string]store.HostLimit `json:"hosts"`
	Allow     []string                   `json:"allow"`
	Deny      []string                   `json:"deny"`
	CCGroups  map[string]int             `json:"cc_groups"`
	Version   json.RawMessage            `json:"version"`
	UpdatedAt json.RawMessage            `json:"updated_at"`
	UpdatedBy json.RawMessage            `json:"updated_by"`
}

func (a *API) getSettings(c *gin.Context) {
	s, err := a.store.GetSettings(c.Request.Context())
	if err != nil {
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "no settings are stored yet"))
		return
	}
	httpapi.WriteVersioned(c, http.StatusOK, s.Version, s)
}

func (a *API) putSettings(c *gin.Context) {
	var body settingsBody
	if err := httpapi.ReadJSON(c, &body, false); err != nil {
		a.WriteError(c, err)
		return
	}
	want, err := httpapi.BodyIfMatch(c.GetHeader("If-Match"), body.Version)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	if want == 0 {
		a.WriteError(c, task.Invalid("version", "send the version you read (the If-Match header or the body's version), "+
			"so that an edit made meanwhile is not overwritten"))
		return
	}
	s := (&store.Settings{HostRate: body.HostRate, HostBurst: body.HostBurst, Hosts: body.Hosts,
		Allow: body.Allow, Deny: body.Deny, CCGroups: body.CCGroups, UpdatedBy: httpapi.Who(c)}).Normalized()
	if err := s.Validate(); err != nil {
		a.WriteError(c, err)
		return
	}
	if err := a.check(s); err != nil {
		a.WriteError(c, err)
		return
	}
	saved, err := a.store.PutSettings(c.Request.Context(), s, want)
	if err != nil {
		err = httpapi.DescribeAs(err, task.ErrConflict, task.CodeVersionConflict,
			"the settings changed since you loaded them (you sent version %d); reload and try again", want)
		a.WriteError(c, httpapi.Describe(err, task.ErrNotFound, "no settings are stored yet"))
		return
	}
	a.applied(saved)
	a.RecordChange(c, store.AuditKindSettings, "settings", store.AuditUpdate, summary(saved))
	httpapi.WriteVersioned(c, http.StatusOK, saved.Version, saved)
}

// summary is what the audit trail keeps of the settings: all of them
// (they hold no secret). Host and group names are values, not keys: a
// MongoDB-compatible store (FerretDB) refuses keys holding a dot.
func summary(s *store.Settings) map[string]any {
	hosts := make([]any, 0, len(s.Hosts))
	for _, h := range slices.Sorted(maps.Keys(s.Hosts)) {
		hosts = append(hosts, map[string]any{"host": h, "rate": s.Hosts[h].Rate, "burst": s.Hosts[h].Burst})
	}
	cc := make([]any, 0, len(s.CCGroups))
	for _, g := range slices.Sorted(maps.Keys(s.CCGroups)) {
		cc = append(cc, map[string]any{"group": g, "limit": s.CCGroups[g]})
	}
	return map[string]any{"version": s.Version, "host_rate": s.HostRate, "host_burst": s.HostBurst,
		"hosts": hosts, "allow": s.Allow, "deny": s.Deny, "cc_groups": cc}
}
