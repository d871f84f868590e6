// Package auth holds cronsheet's credential logic that does not depend on
// HTTP: password hashing (bcrypt), making and checking the secrets of
// sessions and API tokens (random, shown once, stored as a SHA-256 hash in
// store.Users), and the limiter that slows password guessing.
//
// It imports store (for the user and credential types) and task; never
// gin, a store driver or server.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"cronsheet/store"
	"cronsheet/task"
)

// Password bounds, in bytes (bcrypt reads at most 72).
const (
	MinPassword = 8
	MaxPassword = 72
)

// HashPassword returns the bcrypt hash of password, which must be
// MinPassword..MaxPassword bytes (else a *task.ValidationError on field
// "password").
func HashPassword(password string) (string, error) {
	if len(password) < MinPassword || len(password) > MaxPassword {
		return "", task.Invalid("password", "must be %d to %d bytes", MinPassword, MaxPassword)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// dummyHash is compared against when a user does not exist, so that a
// wrong name costs as long as a wrong password.
const dummyHash = "$2a$10$Wr1rJdc85/JFfLOwMJVwH.U80xdFOAUtUenuVTknXcsXw7R1gawzO"

// CheckPassword reports whether password matches hash; an empty hash (a
// user who may not sign in with a password) never matches, after the same
// work as a real comparison.
func CheckPassword(hash, password string) bool {
	if hash == "" {
		_ = bcrypt.CompareHashAndPassword([]byte(dummyHash), []byte(password))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// Secret prefixes: a token or session cookie is prefix + id + "." + secret.
const (
	TokenPrefix   = "cst_"
	SessionPrefix = "css_"
)

// NewCredential makes a credential of kind for user with role and returns
// it with the clear value to hand out once (the store keeps only its hash).
func NewCredential(kind store.CredentialKind, user, name string, role task.Role, now time.Time) (*store.Credential, string, error) {
	id, err := credentialID()
	if err != nil {
		return nil, "", err
	}
	secret, err := randomText(32)
	if err != nil {
		return nil, "", err
	}
	prefix := TokenPrefix
	if kind == store.KindSession {
		prefix = SessionPrefix
	}
	c := &store.Credential{ID: id, Kind: kind, User: user, Name: name, Role: role, Hash: hashSecret(secret),
		CreatedAt: now, LastUsed: now}
	return c, prefix + id + "." + secret, nil
}

// credentialID is a new credential's id: 72 random bits in lower-case
// hex, so it never begins with "-" (the CLI reads such an argument as a
// flag: `cronsheet token revoke <id>`) and holds no ".", which separates
// it from the secret.
func credentialID() (string, error) {
	b := make([]byte, 9)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func randomText(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// ErrBadCredential is returned for a token or session that is malformed,
// unknown, expired, revoked, or whose user is gone or disabled.
var ErrBadCredential = errors.New("invalid or expired credential")

// Lookup is what Verify reads.
type Lookup interface {
	GetCredential(ctx context.Context, id string) (*store.Credential, error)
	GetUser(ctx context.Context, name string) (*store.User, error)
}

// Verify checks a clear token or session value of kind against the store:
// the credential must exist with a matching hash (compared in constant
// time), not be past ExpiresAt at now, and belong to an enabled user. It
// returns the credential and its user, or ErrBadCredential (store failures
// are returned wrapped as they are).
func Verify(ctx context.Context, l Lookup, kind store.CredentialKind, value string, now time.Time) (*store.Credential, *store.User, error) {
	prefix := TokenPrefix
	if kind == store.KindSession {
		prefix = SessionPrefix
	}
	rest, ok := strings.CutPrefix(value, prefix)
	id, secret, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || id == "" || secret == "" || len(value) > 200 {
		return nil, nil, ErrBadCredential
	}
	c, err := l.GetCredential(ctx, id)
	if errors.Is(err, task.ErrNotFound) {
		return nil, nil, ErrBadCredential
	}
	if err != nil {
		return nil, nil, fmt.Errorf("verify credential: %w", err)
	}
	if c.Kind != kind || subtle.ConstantTimeCompare([]byte(c.Hash), []byte(hashSecret(secret))) != 1 ||
		(!c.ExpiresAt.IsZero() && !now.Before(c.ExpiresAt)) {
		return nil, nil, ErrBadCredential
	}
	u, err := l.GetUser(ctx, c.User)
	if errors.Is(err, task.ErrNotFound) {
		return nil, nil, ErrBadCredential
	}
	if err != nil {
		return nil, nil, fmt.Errorf("verify credential: %w", err)
	}
	if u.Disabled {
		return nil, nil, ErrBadCredential
	}
	return c, u, nil
}
