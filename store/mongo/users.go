package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
	"cronsheet/task"
)

// Users and their credentials (store.Users) on MongoDB: collection users
// keyed by name (_id) and collection credentials keyed by id (_id), so
// both uniqueness rules come from _id and no extra index is needed for
// the lookup every authenticated request makes. Listing a user's
// credentials scans the collection, which stays small (sessions expire).
const (
	collUsers       = "users"
	collCredentials = "credentials"
)

var _ store.Users = (*Store)(nil)

type userDoc struct {
	Name         string `bson:"_id"`
	Role         string `bson:"role"`
	PasswordHash string `bson:"password_hash"`
	Disabled     bool   `bson:"disabled"`
	CreatedAt    int64  `bson:"created_at"`
}

func (d *userDoc) user() *store.User {
	return &store.User{Name: d.Name, Role: task.Role(d.Role), PasswordHash: d.PasswordHash,
		Disabled: d.Disabled, CreatedAt: store.FromUnixMS(d.CreatedAt)}
}

type credentialDoc struct {
	ID        string `bson:"_id"`
	Kind      string `bson:"kind"`
	User      string `bson:"user"`
	Name      string `bson:"name"`
	Role      string `bson:"role"`
	Hash      string `bson:"hash"`
	CreatedAt int64  `bson:"created_at"`
	LastUsed  int64  `bson:"last_used"`
	ExpiresAt int64  `bson:"expires_at"`
}

func (d *credentialDoc) credential() *store.Credential {
	return &store.Credential{ID: d.ID, Kind: store.CredentialKind(d.Kind), User: d.User, Name: d.Name,
		Role: task.Role(d.Role), Hash: d.Hash, CreatedAt: store.FromUnixMS(d.CreatedAt),
		LastUsed: timeOrZero(d.LastUsed), ExpiresAt: timeOrZero(d.ExpiresAt)}
}

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
	ctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.colls.get(collUsers).InsertOne(ctx, userDoc{Name: u.Name, Role: string(u.Role),
		PasswordHash: u.PasswordHash, Disabled: u.Disabled, CreatedAt: store.UnixMS(u.CreatedAt)})
	if err != nil {
		return fmt.Errorf("add user %q: %w", u.Name, translate(err))
	}
	return nil
}

// GetUser returns one user, see store.Users.
func (s *Store) GetUser(ctx context.Context, name string) (*store.User, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var d userDoc
	if err := s.colls.get(collUsers).FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&d); err != nil {
		return nil, fmt.Errorf("get user %q: %w", name, translate(err))
	}
	return d.user(), nil
}

// ListUsers returns every user in name order, see store.Users.
func (s *Store) ListUsers(ctx context.Context) ([]*store.User, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.colls.get(collUsers).Find(ctx, bson.D{},
		findOpts().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(store.MaxUsers))
	docs, err := findAll[userDoc](ctx, cur, err)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	out := make([]*store.User, len(docs))
	for i := range docs {
		out[i] = docs[i].user()
	}
	return out, nil
}

// CountUsers says how many users exist, see store.Users.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	n, err := s.colls.get(collUsers).CountDocuments(ctx, bson.D{})
	if err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return int(n), nil
}

// UpdateUser changes a user's role, password hash or disabled flag, see
// store.Users.
func (s *Store) UpdateUser(ctx context.Context, p store.UpdateUserParams) (*store.User, error) {
	if p.Role != nil && !p.Role.Valid() {
		return nil, fmt.Errorf("update user %q: %w", p.Name, task.Invalid("role", "%q is not one of viewer, editor, admin", *p.Role))
	}
	set := bson.D{}
	if p.Role != nil {
		set = append(set, bson.E{Key: "role", Value: string(*p.Role)})
	}
	if p.PasswordHash != nil {
		set = append(set, bson.E{Key: "password_hash", Value: *p.PasswordHash})
	}
	if p.Disabled != nil {
		set = append(set, bson.E{Key: "disabled", Value: *p.Disabled})
	}
	if len(set) == 0 {
		return s.GetUser(ctx, p.Name)
	}
	cctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.colls.get(collUsers).UpdateOne(cctx, bson.D{{Key: "_id", Value: p.Name}},
		bson.D{{Key: "$set", Value: set}})
	if err == nil && res.MatchedCount == 0 {
		err = task.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("update user %q: %w", p.Name, err)
	}
	return s.GetUser(ctx, p.Name)
}

// DeleteUser removes a user and then their credentials, see store.Users.
// Without transactions (FerretDB v1 has none) the credentials go second:
// a credential whose user is gone no longer authenticates anyone, since
// every request also reads the user.
func (s *Store) DeleteUser(ctx context.Context, name string) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.colls.get(collUsers).DeleteOne(ctx, bson.D{{Key: "_id", Value: name}})
	if err == nil && res.DeletedCount == 0 {
		err = task.ErrNotFound
	}
	if err == nil {
		_, err = s.colls.get(collCredentials).DeleteMany(ctx, bson.D{{Key: "user", Value: name}})
	}
	if err != nil {
		return fmt.Errorf("delete user %q: %w", name, err)
	}
	return nil
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
	if _, err := s.GetUser(ctx, c.User); err != nil {
		return fmt.Errorf("add credential: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.colls.get(collCredentials).InsertOne(ctx, credentialDoc{ID: c.ID, Kind: string(c.Kind),
		User: c.User, Name: c.Name, Role: string(c.Role), Hash: c.Hash, CreatedAt: store.UnixMS(c.CreatedAt),
		LastUsed: msOrZero(c.LastUsed), ExpiresAt: msOrZero(c.ExpiresAt)})
	if err != nil {
		return fmt.Errorf("add credential of %q: %w", c.User, translate(err))
	}
	return nil
}

// GetCredential returns one credential by id, see store.Users.
func (s *Store) GetCredential(ctx context.Context, id string) (*store.Credential, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var d credentialDoc
	if err := s.colls.get(collCredentials).FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return nil, fmt.Errorf("get credential: %w", translate(err))
	}
	return d.credential(), nil
}

// TouchCredential sets a credential's last use, see store.Users.
func (s *Store) TouchCredential(ctx context.Context, id string, at time.Time) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.colls.get(collCredentials).UpdateOne(ctx, bson.D{{Key: "_id", Value: id}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "last_used", Value: store.UnixMS(at)}}}})
	if err == nil && res.MatchedCount == 0 {
		err = task.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("touch credential: %w", err)
	}
	return nil
}

// DeleteCredential removes a session or token, see store.Users.
func (s *Store) DeleteCredential(ctx context.Context, id string) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.colls.get(collCredentials).DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err == nil && res.DeletedCount == 0 {
		err = task.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("delete credential: %w", err)
	}
	return nil
}

// ListCredentials lists sessions and tokens, see store.Users.
func (s *Store) ListCredentials(ctx context.Context, p store.ListCredentialsParams) ([]*store.Credential, error) {
	filter := bson.D{}
	if p.User != "" {
		filter = append(filter, bson.E{Key: "user", Value: p.User})
	}
	if p.Kind != "" {
		filter = append(filter, bson.E{Key: "kind", Value: string(p.Kind)})
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.colls.get(collCredentials).Find(ctx, filter, findOpts().
		SetSort(bson.D{{Key: "created_at", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(store.MaxCredentials))
	docs, err := findAll[credentialDoc](ctx, cur, err)
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	out := make([]*store.Credential, len(docs))
	for i := range docs {
		out[i] = docs[i].credential()
	}
	return out, nil
}

// DeleteExpiredCredentials removes credentials past their end, see
// store.Users.
func (s *Store) DeleteExpiredCredentials(ctx context.Context, now time.Time) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.colls.get(collCredentials).DeleteMany(ctx, bson.D{{Key: "expires_at",
		Value: bson.D{{Key: "$gt", Value: int64(0)}, {Key: "$lte", Value: store.UnixMS(now)}}}})
	if err != nil {
		return 0, fmt.Errorf("delete expired credentials: %w", err)
	}
	return int(res.DeletedCount), nil
}
