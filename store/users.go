package store

import (
	"context"
	"time"

	"cronsheet/task"
)

// Users keeps the people and programs that may use cronsheet: users with a
// role and a password hash, and their credentials (browser sessions and API
// tokens), each stored by id with only a hash of its secret. Like AuditLog
// it is separate from Store so that a driver offers it on its own; both
// drivers do. Hashing and checking secrets is the caller's job (package
// auth): the store never sees a password or a token in clear.
type Users interface {
	// AddUser stores a new user, setting CreatedAt when zero. An invalid
	// name or role is task.ErrInvalid; an existing name is task.ErrConflict.
	AddUser(ctx context.Context, u *User) error
	// GetUser returns one user or task.ErrNotFound.
	GetUser(ctx context.Context, name string) (*User, error)
	// ListUsers returns every user in name order (at most MaxUsers).
	ListUsers(ctx context.Context) ([]*User, error)
	// CountUsers says how many users exist.
	CountUsers(ctx context.Context) (int, error)
	// UpdateUser changes the fields p sets and returns the user; a missing
	// user is task.ErrNotFound, an invalid role task.ErrInvalid.
	UpdateUser(ctx context.Context, p UpdateUserParams) (*User, error)
	// DeleteUser removes a user and every credential of theirs; a missing
	// user is task.ErrNotFound.
	DeleteUser(ctx context.Context, name string) error

	// AddCredential stores a new credential, setting CreatedAt when zero.
	// An existing id is task.ErrConflict; a missing user task.ErrNotFound;
	// an invalid kind, role or an empty id or hash task.ErrInvalid.
	AddCredential(ctx context.Context, c *Credential) error
	// GetCredential returns one credential by id or task.ErrNotFound.
	GetCredential(ctx context.Context, id string) (*Credential, error)
	// TouchCredential sets a credential's LastUsed; a missing one is
	// task.ErrNotFound.
	TouchCredential(ctx context.Context, id string, at time.Time) error
	// DeleteCredential removes a credential (a logout, a revoked token);
	// a missing one is task.ErrNotFound.
	DeleteCredential(ctx context.Context, id string) error
	// ListCredentials returns the credentials of p.User (every user when
	// empty) of kind p.Kind (every kind when empty), oldest first, at most
	// MaxCredentials.
	ListCredentials(ctx context.Context, p ListCredentialsParams) ([]*Credential, error)
	// DeleteExpiredCredentials removes credentials whose ExpiresAt is set
	// and not after now; it returns how many.
	DeleteExpiredCredentials(ctx context.Context, now time.Time) (int, error)
}

// Bounds of the Users lists.
const (
	MaxUsers       = 10000
	MaxCredentials = 10000
)

// User is a person or a service account. A user without a password hash
// cannot sign in on the pages but may own API tokens.
type User struct {
	Name string    `json:"name"`
	Role task.Role `json:"role"`
	// PasswordHash is a bcrypt hash; never shown.
	PasswordHash string    `json:"-"`
	Disabled     bool      `json:"disabled"`
	CreatedAt    time.Time `json:"created_at"`
}

// MaxUserName bounds User.Name, in bytes.
const MaxUserName = 64

// ValidateUserName checks a user name: 1..MaxUserName of letters, digits
// and . _ @ -, and the key rule (task.CheckKey: not "." or "..", not
// starting with "-"), so it is safe in logs, URLs and the audit trail.
func ValidateUserName(name string) error {
	if name == "" || len(name) > MaxUserName {
		return task.Invalid("name", "must be 1 to %d characters", MaxUserName)
	}
	if err := task.CheckKey("name", name, MaxUserName); err != nil {
		return err
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '.' || r == '_' || r == '@' || r == '-'
		if !ok {
			return task.Invalid("name", "%q may hold only letters, digits and . _ @ -", name)
		}
	}
	return nil
}

// Validate checks the name and the role.
func (u *User) Validate() error {
	if err := ValidateUserName(u.Name); err != nil {
		return err
	}
	if !u.Role.Valid() {
		return task.Invalid("role", "%q is not one of viewer, editor, admin", u.Role)
	}
	return nil
}

// UpdateUserParams are the arguments of Users.UpdateUser; nil leaves a
// field as it is.
type UpdateUserParams struct {
	Name         string
	Role         *task.Role
	PasswordHash *string
	Disabled     *bool
}

// CredentialKind tells sessions from tokens.
type CredentialKind string

// Credential kinds.
const (
	// KindSession is a signed-in browser's session cookie.
	KindSession CredentialKind = "session"
	// KindToken is an API token (Authorization: Bearer).
	KindToken CredentialKind = "token"
)

// Credential is a session or an API token. Its secret is shown once, when
// made; the store keeps Hash (hex SHA-256 of the secret) to compare with.
type Credential struct {
	ID   string         `json:"id"`
	Kind CredentialKind `json:"kind"`
	User string         `json:"user"`
	// Name names a token (for the audit trail); "" for a session.
	Name string `json:"name,omitempty"`
	// Role caps what the credential may do (the user's role caps it too).
	Role      task.Role `json:"role"`
	Hash      string    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	// LastUsed is when it was last seen (sessions: their idle clock).
	LastUsed time.Time `json:"last_used"`
	// ExpiresAt is the absolute end; zero = never.
	ExpiresAt time.Time `json:"expires_at"`
}

// Validate checks what AddCredential requires.
func (c *Credential) Validate() error {
	switch {
	case c.ID == "" || len(c.ID) > 64:
		return task.Invalid("id", "must be 1 to 64 characters")
	case c.Kind != KindSession && c.Kind != KindToken:
		return task.Invalid("kind", "%q is not one of session, token", c.Kind)
	case !c.Role.Valid():
		return task.Invalid("role", "%q is not one of viewer, editor, admin", c.Role)
	case c.Hash == "":
		return task.Invalid("hash", "required")
	case len(c.Name) > MaxUserName:
		return task.Invalid("name", "longer than %d characters", MaxUserName)
	}
	if ValidateUserName(c.User) != nil {
		return task.Invalid("user", "%q is not a user name", c.User)
	}
	return nil
}

// ListCredentialsParams are the arguments of Users.ListCredentials.
type ListCredentialsParams struct {
	User string
	Kind CredentialKind
}
