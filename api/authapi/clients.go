package authapi

import (
	"crypto/sha256"
	"crypto/subtle"
)

// TokenList is the allow and deny list of the jobs API's clients, by bearer
// token (Authorization: Bearer <token>), from CRONSHEET_JOB_TOKENS and
// CRONSHEET_JOB_DENIED_TOKENS. The Guard folds it into sign-in: an allowed
// token is an editor limited to /api/v1/jobs…, a denied one is refused
// (403) everywhere. Tokens are compared in constant time.
type TokenList struct {
	allow, deny [][32]byte
}

// NewTokenList returns the list; empty tokens are ignored.
func NewTokenList(allow, deny []string) *TokenList {
	l := &TokenList{}
	for _, t := range allow {
		if t != "" {
			l.allow = append(l.allow, sha256.Sum256([]byte(t)))
		}
	}
	for _, t := range deny {
		if t != "" {
			l.deny = append(l.deny, sha256.Sum256([]byte(t)))
		}
	}
	return l
}

func contains(list [][32]byte, h [32]byte) bool {
	found := 0
	for _, x := range list {
		found |= subtle.ConstantTimeCompare(x[:], h[:])
	}
	return found == 1
}

// denied reports whether token is on the deny list; a nil list denies none.
func (l *TokenList) denied(token string) bool {
	return l != nil && token != "" && contains(l.deny, sha256.Sum256([]byte(token)))
}

// allowed reports whether token is on the allow list; a nil list allows none.
func (l *TokenList) allowed(token string) bool {
	return l != nil && token != "" && contains(l.allow, sha256.Sum256([]byte(token)))
}
