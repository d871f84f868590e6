// Package configured builds the executors of every delivery channel from
// cronsheet's configuration (package config): email and SMS send or keep
// their deliveries in the outbox by their mode, http callbacks go behind
// the configured host guard, exec runs the allow-listed commands, and
// kafka targets need brokers. It also says what a target or a job may name
// under that configuration.
package configured

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"cronsheet/config"
	"cronsheet/executors"
	"cronsheet/task"
)

// Executors is the registry of every channel's executor built from a
// configuration, and what it needs to check and release.
type Executors struct {
	// Registry maps each channel to its executor. The builtin channel is
	// left for the caller to register (its executor needs the scheduler).
	Registry *executors.Registry
	http     *executors.HTTP
	exec     *executors.Exec
	kafka    *executors.Kafka // nil without kafka.brokers
}

// New builds the executors of cfg; outbox stores the deliveries of the
// outbox channel and of the channels in outbox mode. Close releases their
// clients; when New fails, what it built is released already.
func New(logger *slog.Logger, outbox executors.OutboxWriter, cfg config.Config) (*Executors, error) {
	x := &Executors{Registry: executors.NewRegistry()}
	box := executors.NewOutbox(logger, outbox)
	x.Registry.Register(task.ChannelOutbox, box)
	err := x.messaging(logger, box, cfg.Email, cfg.SMS)
	if err == nil {
		err = x.targets(logger, cfg.HTTP, cfg.Exec, cfg.Kafka)
	}
	if err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}

// messaging registers the email and SMS executors: the outbox unless
// their mode is send.
func (x *Executors) messaging(logger *slog.Logger, box *executors.Outbox, e config.Email, m config.SMS) error {
	if e.Mode == config.ModeSend {
		email, err := executors.NewEmail(logger, executors.EmailConfig{
			Host: e.Host, Port: e.Port, Username: e.Username, Password: e.Password,
			From: e.From, TLS: e.TLS, Timeout: e.Timeout,
		})
		if err != nil {
			return fmt.Errorf("email: %w", err)
		}
		x.Registry.Register(task.ChannelEmail, email)
	} else {
		x.Registry.Register(task.ChannelEmail, box)
	}
	if m.Mode == config.ModeSend {
		sms, err := executors.NewSMS(logger, executors.SMSConfig{
			AccountSID: m.AccountSID, AuthToken: m.AuthToken, From: m.From,
			BaseURL: m.APIBaseURL, Timeout: m.Timeout,
		})
		if err != nil {
			return fmt.Errorf("sms: %w", err)
		}
		x.Registry.Register(task.ChannelSMS, sms)
	} else {
		x.Registry.Register(task.ChannelSMS, box)
	}
	return nil
}

// targets registers the executors of the http, exec and kafka targets.
func (x *Executors) targets(logger *slog.Logger, h config.HTTPTarget, e config.ExecTarget, k config.KafkaTarget) error {
	var err error
	if x.http, err = executors.NewHTTP(logger, executors.HTTPConfig{Allow: h.Allow, Deny: h.Deny}); err != nil {
		return fmt.Errorf("http: %w", err)
	}
	x.Registry.Register(task.ChannelHTTP, x.http)
	cmds := make(map[string]executors.ExecCommand, len(e.Commands))
	for name, c := range e.Commands {
		cmds[name] = executors.ExecCommand{Path: c.Path, Args: c.Args, Dir: c.Dir, Env: c.Env}
	}
	if x.exec, err = executors.NewExec(logger, executors.ExecConfig{Commands: cmds}); err != nil {
		return fmt.Errorf("exec.commands: %w", err)
	}
	x.Registry.Register(task.ChannelExec, x.exec)
	if len(k.Brokers) == 0 {
		x.Registry.Register(task.ChannelKafka, executors.ExecutorFunc(func(context.Context, task.Delivery) (string, error) {
			return "", task.Permanent(errors.New("kafka targets need kafka.brokers in config"))
		}))
		return nil
	}
	if x.kafka, err = executors.NewKafka(logger, executors.KafkaConfig{Brokers: k.Brokers, ClientID: k.ClientID}); err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	x.Registry.Register(task.ChannelKafka, x.kafka)
	return nil
}

// Close releases the executors' clients (the http transport's idle
// connections, the kafka producer).
func (x *Executors) Close() {
	if x.http != nil {
		x.http.Close()
	}
	if x.kafka != nil {
		x.kafka.Close()
	}
}

// CheckTarget says whether tg may be delivered under this configuration:
// an exec target names a listed command, an http target's host passes the
// guard, a kafka target has brokers.
func (x *Executors) CheckTarget(tg *task.Target) error {
	switch tg.Kind {
	case task.ChannelExec:
		if !x.exec.Has(tg.Exec.Command) {
			return task.Invalid("exec.command", "%q is not listed in config exec.commands", tg.Exec.Command)
		}
	case task.ChannelHTTP:
		if err := x.http.Guard().Check(urlHost(tg.HTTP.URL)); err != nil {
			return task.Invalid("http.url", "%v", err)
		}
	case task.ChannelKafka:
		if x.kafka == nil {
			return task.Invalid("kind", "kafka targets need kafka.brokers in config")
		}
	}
	return nil
}

// CheckJob is CheckTarget for a job's target. That target is built from
// the job's method and name, so its errors name the job's fields.
func (x *Executors) CheckJob(t *task.Task) error {
	var ve *task.ValidationError
	switch err := x.CheckTarget(t.Job.Target()); {
	case err == nil:
		return nil
	case !errors.As(err, &ve):
		return err
	case ve.Field == "kind":
		return task.Invalid("method", "%s", ve.Msg)
	default:
		return task.Invalid("name", "%s", ve.Msg)
	}
}

// urlHost returns the host name of a target URL (whose templates, if any,
// follow the host).
func urlHost(raw string) string {
	if i := strings.Index(raw, "{{"); i >= 0 {
		raw = raw[:i]
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// CheckHostLists checks an allow and a deny list as the host guard parses
// them; the error is a *task.ValidationError naming the list ("allow" or
// "deny") and the entry.
func (x *Executors) CheckHostLists(allow, deny []string) error {
	if _, err := executors.NewHostGuard(allow, nil); err != nil {
		return task.Invalid("allow", "%s", strings.TrimPrefix(err.Error(), "http.allow: "))
	}
	if _, err := executors.NewHostGuard(nil, deny); err != nil {
		return task.Invalid("deny", "%s", strings.TrimPrefix(err.Error(), "http.deny: "))
	}
	return nil
}

// SetHostLists swaps the http callbacks' allow and deny lists (see
// executors.HTTP.SetGuard); an error changes nothing.
func (x *Executors) SetHostLists(allow, deny []string) error {
	return x.http.SetGuard(allow, deny)
}

// Probe sends the probe of the http target tg (executors.HTTP.Probe).
func (x *Executors) Probe(ctx context.Context, tg *task.Target) error {
	if x.http == nil {
		return fmt.Errorf("probe of target %s: no http executor: %w", tg.ID, task.ErrInvalid)
	}
	return x.http.Probe(ctx, tg)
}
