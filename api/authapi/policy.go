package authapi

import "cronsheet/task"

// Access is what a route asks of the caller.
type Access string

// Accesses, from none to the most.
const (
	// AccessOpen lets anyone in (/healthz, the sign-in page and its
	// assets, the sign-in call).
	AccessOpen Access = "open"
	// AccessViewer, AccessEditor and AccessAdmin need a principal with at
	// least that role.
	AccessViewer Access = "viewer"
	AccessEditor Access = "editor"
	AccessAdmin  Access = "admin"
	// AccessMetrics is /metrics: open when the guard's MetricsPublic is
	// set, else AccessViewer.
	AccessMetrics Access = "metrics"
)

// role is the role an access needs ("" for open).
func (a Access) role() task.Role {
	switch a {
	case AccessViewer, AccessMetrics:
		return task.RoleViewer
	case AccessEditor:
		return task.RoleEditor
	case AccessAdmin:
		return task.RoleAdmin
	}
	return ""
}

// Policy is the access of every route that cronsheet serves, by "METHOD
// /route" as gin names it (engine.Routes()). The guard refuses a route
// missing here (fail closed), and a test lists the engine's routes against
// this table, so a new route cannot be left unguarded by mistake.
//
// Roles: a viewer reads every page and API; an editor also changes rows,
// tasks, runs, jobs and flows; an admin also manages targets (which name
// callback URLs and commands), users, tokens and imports.
func Policy() map[string]Access {
	return map[string]Access{
		// Open.
		"GET /healthz":                 AccessOpen,
		"GET /login":                   AccessOpen,
		"GET /assets/*path":            AccessOpen,
		"POST /api/v1/login":           AccessOpen,
		"POST /api/v1/logout":          AccessOpen,
		"GET /metrics":                 AccessMetrics,
		"GET /api/v1/me":               AccessViewer,
		"GET /api/v1/status":           AccessViewer,
		"GET /":                        AccessViewer,
		"GET /targets":                 AccessViewer,
		"GET /runs":                    AccessViewer,
		"GET /jobs":                    AccessViewer,
		"GET /outbox":                  AccessViewer,
		"GET /status":                  AccessViewer,
		"GET /api/v1/outbox":           AccessViewer,
		"GET /api/v1/audit":            AccessViewer,
		"GET /api/v1/stats/fires":      AccessViewer,
		"GET /api/v1/stats/upcoming":   AccessViewer,
		"GET /audit":                   AccessViewer,
		"GET /users":                   AccessAdmin,
		"GET /api/v1/schedule/preview": AccessViewer,
		"GET /api/v1/openapi.json":     AccessViewer,
		"GET /api/docs":                AccessViewer,

		// Rows and the table.
		"GET /api/v1/scenarios/:scenario/rows":           AccessViewer,
		"GET /api/v1/scenarios/:scenario/rows/:id":       AccessViewer,
		"GET /api/v1/scenarios/:scenario/rows/:id/audit": AccessViewer,
		"GET /api/v1/scenarios/:scenario/table":          AccessViewer,
		"POST /api/v1/scenarios/:scenario/table":         AccessViewer, // DataTables reads by POST
		"GET /api/v1/scenarios/:scenario/table.csv":      AccessViewer,
		"GET /api/v1/scenarios/:scenario/columns":        AccessViewer,
		"POST /api/v1/scenarios/:scenario/rows":          AccessEditor,
		"PATCH /api/v1/scenarios/:scenario/rows/:id":     AccessEditor,
		"DELETE /api/v1/scenarios/:scenario/rows/:id":    AccessEditor,
		"POST /api/v1/scenarios/:scenario/rows/bulk":     AccessEditor,
		"POST /api/v1/scenarios/:scenario/rows/batch":    AccessEditor,
		"POST /api/v1/scenarios/:scenario/import":        AccessAdmin,

		// Tasks and runs.
		"GET /api/v1/tasks/:task_id":             AccessViewer,
		"GET /api/v1/tasks/:task_id/explain":     AccessViewer,
		"PUT /api/v1/tasks/:task_id/state":       AccessEditor,
		"POST /api/v1/tasks/:task_id/trigger":    AccessEditor,
		"GET /api/v1/runs":                       AccessViewer,
		"GET /api/v1/runs/:trigger_id":           AccessViewer,
		"POST /api/v1/runs/:trigger_id/feedback": AccessEditor,
		"POST /api/v1/runs/:trigger_id/cancel":   AccessEditor,

		// Targets.
		"GET /api/v1/targets":        AccessViewer,
		"GET /api/v1/targets/:id":    AccessViewer,
		"POST /api/v1/targets":       AccessAdmin,
		"PUT /api/v1/targets/:id":    AccessAdmin,
		"DELETE /api/v1/targets/:id": AccessAdmin,

		// Jobs.
		"GET /api/v1/jobs":              AccessViewer,
		"GET /api/v1/jobs/:id":          AccessViewer,
		"GET /api/v1/jobs/dead.jsonl":   AccessViewer,
		"GET /api/v1/jobs/ws":           AccessEditor, // submits jobs
		"POST /api/v1/jobs":             AccessEditor,
		"POST /api/v1/jobs/backfill":    AccessEditor,
		"PUT /api/v1/jobs/by-key/:key":  AccessEditor,
		"DELETE /api/v1/jobs/:id":       AccessEditor,
		"POST /api/v1/jobs/:id/block":   AccessEditor,
		"POST /api/v1/jobs/:id/unblock": AccessEditor,

		// Flows.
		"GET /flows":                       AccessViewer,
		"GET /api/v1/flows":                AccessViewer,
		"GET /api/v1/flows/:id":            AccessViewer,
		"GET /api/v1/flows/:id/executions": AccessViewer,
		"GET /api/v1/executions/:id":       AccessViewer,
		"POST /api/v1/flows":               AccessEditor,
		"PUT /api/v1/flows/:id":            AccessEditor,
		"DELETE /api/v1/flows/:id":         AccessEditor,
		"POST /api/v1/flows/:id/trigger":   AccessEditor,
		"POST /api/v1/executions/:id/stop": AccessEditor,

		// Live settings.
		"GET /settings":        AccessViewer,
		"GET /api/v1/settings": AccessViewer,
		"PUT /api/v1/settings": AccessAdmin,

		// Users and tokens.
		"GET /api/v1/users":          AccessAdmin,
		"POST /api/v1/users":         AccessAdmin,
		"PATCH /api/v1/users/:name":  AccessAdmin,
		"DELETE /api/v1/users/:name": AccessAdmin,
		"GET /api/v1/tokens":         AccessAdmin,
		"POST /api/v1/tokens":        AccessAdmin,
		"DELETE /api/v1/tokens/:id":  AccessAdmin,
	}
}

// bodyMediaType is the media type a state-changing /api/v1 request's body
// must say: text/csv for the CSV import, none for DataTables' form-encoded
// reads (they change nothing), application/json for every other route. No
// required type is one a cross-site HTML form or a CORS "simple" request can
// send (text/plain, form-encoded, multipart), so such a request never
// reaches a handler that writes, with or without Origin and Sec-Fetch-Site.
func bodyMediaType(route string) string {
	switch route {
	case "POST /api/v1/scenarios/:scenario/import":
		return "text/csv"
	case "POST /api/v1/scenarios/:scenario/table":
		return ""
	}
	return "application/json"
}
