package server

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/gin-gonic/gin"

	"cronsheet/api/authapi"
	"cronsheet/auth"
	"cronsheet/config"
	"cronsheet/store"
	"cronsheet/task"
)

// firstAdmin creates the user "admin" with CRONSHEET_ADMIN_PASSWORD when
// the store has no user yet; with auth required and no user it warns how
// to make one.
func (s *Server) firstAdmin(ctx context.Context) error {
	users := s.store
	n, err := users.CountUsers(ctx)
	if err != nil || n > 0 {
		return err
	}
	if s.cfg.AdminPassword == "" {
		if s.cfg.Auth == config.AuthRequired {
			s.logger.WarnContext(ctx, "no users yet: set CRONSHEET_ADMIN_PASSWORD or run `cronsheet user add NAME --role admin`")
		}
		return nil
	}
	hash, err := auth.HashPassword(s.cfg.AdminPassword)
	if err != nil {
		return fmt.Errorf("CRONSHEET_ADMIN_PASSWORD: %w", err)
	}
	err = users.AddUser(ctx, &store.User{Name: "admin", Role: task.RoleAdmin, PasswordHash: hash})
	switch {
	case errors.Is(err, task.ErrConflict): // another node made it first
	case err != nil:
		return fmt.Errorf("create the first admin: %w", err)
	default:
		s.logger.InfoContext(ctx, "created the first admin from CRONSHEET_ADMIN_PASSWORD", "user", "admin")
	}
	return nil
}

// guard builds the sign-in guard of every route and sets which proxies
// engine trusts for the client address.
func (s *Server) guard(engine *gin.Engine) (*authapi.Guard, error) {
	if err := engine.SetTrustedProxies(s.cfg.TrustedProxies); err != nil {
		return nil, fmt.Errorf("trusted_proxies: %w", err)
	}
	users := s.store
	c := s.cfg
	if c.Auth == config.AuthLocalDev {
		s.logger.Warn("auth: local_dev — every request on this loopback listener acts as a local admin; " +
			"use auth: required on a shared machine")
	}
	return authapi.NewGuard(authapi.GuardConfig{
		Audit:         s.store,
		Logger:        s.logger,
		Users:         users,
		LocalDev:      c.Auth == config.AuthLocalDev,
		PublicHosts:   c.PublicHosts,
		SessionIdle:   c.Session.Idle,
		SessionMax:    c.Session.Max,
		MetricsPublic: c.Metrics.Public,
		JobClients:    authapi.NewTokenList(c.Jobs.AllowTokens, c.Jobs.DenyTokens),
	}), nil
}

// checkListener refuses auth local_dev on a listener that is not bound to
// loopback (Validate checks the configured address; this checks the bound
// one, whatever a name such as localhost resolved to).
func (s *Server) checkListener() error {
	if s.cfg.Auth != config.AuthLocalDev {
		return nil
	}
	if a, ok := s.ln.Addr().(*net.TCPAddr); ok && a.IP.IsLoopback() {
		return nil
	}
	return fmt.Errorf("auth: local_dev needs a loopback listener, and %s is not: use auth: required", s.ln.Addr())
}

// OpenUsers opens the store cfg names for the user and token commands;
// call the returned func to close it.
func OpenUsers(ctx context.Context, cfg config.Store) (store.Users, func(), error) {
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return st, func() { _ = st.Close() }, nil
}
