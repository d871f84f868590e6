package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// Users and their credentials (store.Users) on SQLite: two small tables
// that Open creates idempotently with the rest of the schema. Credentials
// are found by id (the primary key) on every authenticated request, and by
// user when listing or deleting a user.
const usersSchema = `
CREATE TABLE IF NOT EXISTS users (
	name          TEXT    PRIMARY KEY,
	role          TEXT    NOT NULL,
	password_hash TEXT    NOT NULL DEFAULT '',
	disabled      INTEGER NOT NULL DEFAULT 0,
	created_at    INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS credentials (
	id         TEXT    PRIMARY KEY,
	kind       TEXT    NOT NULL,
	user       TEXT    NOT NULL,
	name       TEXT    NOT NULL DEFAULT '',
	role       TEXT    NOT NULL,
	hash       TEXT    NOT NULL,
	created_at INTEGER NOT NULL DEFAULT 0,
	last_used  INTEGER NOT NULL DEFAULT 0,
	expires_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS ix_credentials_user ON credentials (user, id);
`

var _ store.Users = (*Store)(nil)

// msOrZero is t in unix milliseconds, 0 for the zero time.
func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return store.UnixMS(t)
}

// timeOrZero reads msOrZero back.
func timeOrZero(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return store.FromUnixMS(ms)
}

// AddUser stores a new user, see store.Users.
func (s *Store) AddUser(ctx context.Context, u *store.User) error {
	if err := u.Validate(); err != nil {
		return fmt.Errorf("add user: %w", err)
	}
	if u.CreatedAt.IsZero() {
		u.CreatedAt = s.now()
	}
	u.CreatedAt = store.FromUnixMS(store.UnixMS(u.CreatedAt))
	_, err := s.w.ExecContext(ctx, `INSERT INTO users (name, role, password_hash, disabled, created_at)
		VALUES (?, ?, ?, ?, ?)`, u.Name, string(u.Role), u.PasswordHash, boolInt(u.Disabled), store.UnixMS(u.CreatedAt))
	if err != nil {
		return fmt.Errorf("add user %q: %w", u.Name, translate(err))
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

const userCols = `name, role, password_hash, disabled, created_at`

func scanUser(sc interface{ Scan(...any) error }) (*store.User, error) {
	var (
		u        store.User
		role     string
		disabled int
		created  int64
	)
	if err := sc.Scan(&u.Name, &role, &u.PasswordHash, &disabled, &created); err != nil {
		return nil, err
	}
	u.Role, u.Disabled, u.CreatedAt = task.Role(role), disabled != 0, store.FromUnixMS(created)
	return &u, nil
}

// GetUser returns one user, see store.Users.
func (s *Store) GetUser(ctx context.Context, name string) (*store.User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE name = ?`, name))
	if err != nil {
		return nil, fmt.Errorf("get user %q: %w", name, translate(err))
	}
	return u, nil
}

// ListUsers returns every user in name order, see store.Users.
func (s *Store) ListUsers(ctx context.Context) ([]*store.User, error) {
	rs, err := s.r.QueryContext(ctx, `SELECT `+userCols+` FROM users ORDER BY name LIMIT ?`, store.MaxUsers)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rs.Close()
	var out []*store.User
	for rs.Next() {
		u, err := scanUser(rs)
		if err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		out = append(out, u)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// CountUsers says how many users exist, see store.Users.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// UpdateUser changes a user's role, password hash or disabled flag, see
// store.Users.
func (s *Store) UpdateUser(ctx context.Context, p store.UpdateUserParams) (*store.User, error) {
	if p.Role != nil && !p.Role.Valid() {
		return nil, fmt.Errorf("update user %q: %w", p.Name, task.Invalid("role", "%q is not one of viewer, editor, admin", *p.Role))
	}
	var (
		sets []string
		args []any
	)
	if p.Role != nil {
		sets, args = append(sets, "role = ?"), append(args, string(*p.Role))
	}
	if p.PasswordHash != nil {
		sets, args = append(sets, "password_hash = ?"), append(args, *p.PasswordHash)
	}
	if p.Disabled != nil {
		sets, args = append(sets, "disabled = ?"), append(args, boolInt(*p.Disabled))
	}
	if len(sets) == 0 {
		return s.GetUser(ctx, p.Name)
	}
	args = append(args, p.Name)
	u, err := scanUser(s.w.QueryRowContext(ctx, `UPDATE users SET `+strings.Join(sets, ", ")+
		` WHERE name = ? RETURNING `+userCols, args...))
	if err != nil {
		return nil, fmt.Errorf("update user %q: %w", p.Name, translate(err))
	}
	return u, nil
}

// DeleteUser removes a user and their credentials, see store.Users.
func (s *Store) DeleteUser(ctx context.Context, name string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE name = ?`, name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmpErr(err, task.ErrNotFound)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM credentials WHERE user = ?`, name)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete user %q: %w", name, err)
	}
	return nil
}

// cmpErr returns err, or def when err is nil.
func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// AddCredential stores a session or token, see store.Users.
func (s *Store) AddCredential(ctx context.Context, c *store.Credential) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("add credential: %w", err)
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now()
	}
	c.CreatedAt = store.FromUnixMS(store.UnixMS(c.CreatedAt))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM users WHERE name = ?`, c.User).Scan(&one); err != nil {
			return translate(err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO credentials
			(id, kind, user, name, role, hash, created_at, last_used, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, string(c.Kind), c.User, c.Name, string(c.Role), c.Hash, store.UnixMS(c.CreatedAt),
			msOrZero(c.LastUsed), msOrZero(c.ExpiresAt))
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("add credential of %q: %w", c.User, err)
	}
	return nil
}

const credCols = `id, kind, user, name, role, hash, created_at, last_used, expires_at`

func scanCredential(sc interface{ Scan(...any) error }) (*store.Credential, error) {
	var (
		c                      store.Credential
		kind, role             string
		created, used, expires int64
	)
	if err := sc.Scan(&c.ID, &kind, &c.User, &c.Name, &role, &c.Hash, &created, &used, &expires); err != nil {
		return nil, err
	}
	c.Kind, c.Role = store.CredentialKind(kind), task.Role(role)
	c.CreatedAt, c.LastUsed, c.ExpiresAt = store.FromUnixMS(created), timeOrZero(used), timeOrZero(expires)
	return &c, nil
}

// GetCredential returns one credential by id, see store.Users.
func (s *Store) GetCredential(ctx context.Context, id string) (*store.Credential, error) {
	c, err := scanCredential(s.r.QueryRowContext(ctx, `SELECT `+credCols+` FROM credentials WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("get credential: %w", translate(err))
	}
	return c, nil
}

// TouchCredential sets a credential's last use, see store.Users.
func (s *Store) TouchCredential(ctx context.Context, id string, at time.Time) error {
	return s.changeCredential(ctx, "touch", `UPDATE credentials SET last_used = ? WHERE id = ?`, store.UnixMS(at), id)
}

// DeleteCredential removes a session or token, see store.Users.
func (s *Store) DeleteCredential(ctx context.Context, id string) error {
	return s.changeCredential(ctx, "delete", `DELETE FROM credentials WHERE id = ?`, id)
}

// changeCredential runs q, which changes at most one credential; none
// changed is task.ErrNotFound.
func (s *Store) changeCredential(ctx context.Context, what, q string, args ...any) error {
	res, err := s.w.ExecContext(ctx, q, args...)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			err = task.ErrNotFound
		}
	}
	if err != nil {
		return fmt.Errorf("%s credential: %w", what, err)
	}
	return nil
}

// ListCredentials lists sessions and tokens, see store.Users.
func (s *Store) ListCredentials(ctx context.Context, p store.ListCredentialsParams) ([]*store.Credential, error) {
	rs, err := s.r.QueryContext(ctx, `SELECT `+credCols+` FROM credentials
		WHERE (? = '' OR user = ?) AND (? = '' OR kind = ?) ORDER BY created_at, id LIMIT ?`,
		p.User, p.User, string(p.Kind), string(p.Kind), store.MaxCredentials)
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	defer rs.Close()
	var out []*store.Credential
	for rs.Next() {
		c, err := scanCredential(rs)
		if err != nil {
			return nil, fmt.Errorf("list credentials: %w", err)
		}
		out = append(out, c)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	return out, nil
}

// DeleteExpiredCredentials removes credentials past their end, see
// store.Users.
func (s *Store) DeleteExpiredCredentials(ctx context.Context, now time.Time) (int, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM credentials WHERE expires_at > 0 AND expires_at <= ?`, store.UnixMS(now))
	if err != nil {
		return 0, fmt.Errorf("delete expired credentials: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete expired credentials: %w", err)
	}
	return int(n), nil
}
