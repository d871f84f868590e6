package task

// Role is what a user or token may do. Each role includes the ones below it.
type Role string

// Roles, weakest first.
const (
	// RoleViewer reads every page and API.
	RoleViewer Role = "viewer"
	// RoleEditor also edits rows, tasks, runs, jobs and flows.
	RoleEditor Role = "editor"
	// RoleAdmin also manages targets, users, tokens, settings and imports.
	RoleAdmin Role = "admin"
)

// rank orders the roles; 0 is not a role.
func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleEditor:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// Allows reports whether r includes need.
func (r Role) Allows(need Role) bool { return r.Valid() && r.rank() >= need.rank() }

// Min returns the weaker of r and o.
func (r Role) Min(o Role) Role {
	if o.rank() < r.rank() {
		return o
	}
	return r
}
