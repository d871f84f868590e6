package executors

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/mail"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"gopkg.in/gomail.v2"

	"cronsheet/task"
)

// TLS modes of EmailConfig.TLS.
const (
	// TLSNone speaks plain SMTP and never upgrades, even when the server
	// offers STARTTLS (local relays, test servers).
	TLSNone = "none"
	// TLSStartTLS requires the STARTTLS upgrade; a server that does not
	// offer it is an error. The default.
	TLSStartTLS = "starttls"
	// TLSImplicit starts TLS before SMTP (SMTPS, usually port 465).
	TLSImplicit = "tls"
)

// HeaderTriggerID is the mail header carrying Delivery.TriggerID.
const HeaderTriggerID = "X-Cronsheet-Trigger-Id"

// HeaderNode and HeaderInstance carry Delivery.Node and Delivery.Instance
// on HTTP calls and Kafka records: which node, and which process of it,
// sent a delivery.
const (
	HeaderNode     = "X-Cronsheet-Node"
	HeaderInstance = "X-Cronsheet-Instance"
)

// EmailConfig configures an Email executor.
type EmailConfig struct {
	// Host is the SMTP server's host name or IP. Required.
	Host string
	// Port is the SMTP server's port. Default: 465 for TLSImplicit, 587 for
	// TLSStartTLS, 25 for TLSNone.
	Port int
	// Username and Password authenticate with AUTH PLAIN (or LOGIN when the
	// server offers only that). Empty Username: no authentication. With
	// TLSNone they are allowed only towards a loopback host.
	Username, Password string
	// From is the sender, "addr@example.com" or "Name <addr@example.com>".
	// Required.
	From string
	// TLS is "none", "starttls" or "tls" (the TLS* constants). Default
	// "starttls".
	TLS string
	// TLSConfig is used for STARTTLS and implicit TLS. Default: system roots;
	// an empty ServerName is set to Host.
	TLSConfig *tls.Config
	// Timeout bounds one whole delivery: dial, TLS, auth and the SMTP
	// dialogue. The caller's context deadline applies when sooner. Default
	// 30s.
	Timeout time.Duration
}

// Email delivers over SMTP. gomail builds the MIME message; go-smtp's client
// carries it, because gomail's Dialer has no context, no I/O deadline and
// always upgrades to STARTTLS when offered.
type Email struct {
	logger  *slog.Logger
	addr    string
	tlsMode string
	tlsConf *tls.Config
	user    string
	pass    string
	from    *mail.Address
	timeout time.Duration
}

// NewEmail validates cfg and returns an Email executor. logger may be nil.
func NewEmail(logger *slog.Logger, cfg EmailConfig) (*Email, error) {
	cfg.TLS = cmp.Or(cfg.TLS, TLSStartTLS)
	if cfg.Host == "" {
		return nil, errors.New("email config: host is required")
	}
	switch cfg.TLS {
	case TLSNone:
		cfg.Port = cmp.Or(cfg.Port, 25)
	case TLSStartTLS:
		cfg.Port = cmp.Or(cfg.Port, 587)
	case TLSImplicit:
		cfg.Port = cmp.Or(cfg.Port, 465)
	default:
		return nil, fmt.Errorf("email config: tls %q, want none, starttls or tls", cfg.TLS)
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("email config: port %d out of range", cfg.Port)
	}
	from, err := mail.ParseAddress(cfg.From)
	if err == nil {
		err = task.CheckEmail(from.Address)
	}
	if err != nil {
		return nil, fmt.Errorf("email config: from %q: %w", cfg.From, err)
	}
	if cfg.Username != "" && cfg.TLS == TLSNone && !isLoopback(cfg.Host) {
		return nil, fmt.Errorf("email config: refusing to send credentials without TLS to %s", cfg.Host)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("email config: negative timeout %v", cfg.Timeout)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.TLSConfig != nil {
		tc = cfg.TLSConfig.Clone()
	}
	tc.ServerName = cmp.Or(tc.ServerName, cfg.Host)
	return &Email{
		logger:  componentLogger(logger, "executors.email"),
		addr:    net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)),
		tlsMode: cfg.TLS,
		tlsConf: tc,
		user:    cfg.Username,
		pass:    cfg.Password,
		from:    from,
		timeout: cmp.Or(cfg.Timeout, 30*time.Second),
	}, nil
}

// Execute mails d.Subject and the text/plain d.Body to d.To, with d.TriggerID
// in the X-Cronsheet-Trigger-Id header. An invalid d.To (checked before
// dialling) and SMTP 5xx replies are task.Permanent; refused connections,
// timeouts, cancellation, TLS failures and 4xx replies are retryable.
func (e *Email) Execute(ctx context.Context, d task.Delivery) (string, error) {
	if err := task.CheckEmail(d.To); err != nil {
		return "", task.Permanent(fmt.Errorf("email recipient: %w", err))
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	reply, err := e.send(ctx, d.To, e.message(d))
	if err != nil {
		return "", classifySMTP(ctx, err)
	}
	e.logger.DebugContext(ctx, "email sent", "task_id", d.TaskID,
		"trigger_id", d.TriggerID, "attempt", d.Attempt, "reply", reply)
	return task.Truncate("smtp 250 "+reply, task.MaxOutput), nil
}

// message builds the MIME message of d.
func (e *Email) message(d task.Delivery) *gomail.Message {
	m := gomail.NewMessage()
	m.SetAddressHeader("From", e.from.Address, e.from.Name)
	m.SetHeader("To", d.To)
	m.SetHeader("Subject", d.Subject)
	if d.TriggerID != "" {
		m.SetHeader(HeaderTriggerID, d.TriggerID)
		if id := messageID(d.TriggerID, e.from.Address); id != "" {
			m.SetHeader("Message-ID", id)
		}
	}
	m.SetBody("text/plain", d.Body)
	return m
}

// messageID returns the Message-ID of a run's email, <trigger_id@domain>
// with the sender's domain: the same for every attempt of the run, on any
// node, so a resend is recognised as the same message. It is "" (no
// header; the receiving server adds one) when the trigger id is not a
// plain RFC 5322 dot-atom.
func messageID(triggerID, from string) string {
	domain := from[strings.LastIndexByte(from, '@')+1:]
	for _, c := range []byte(triggerID) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-/=?^_`{|}~.", c) >= 0
		if !ok {
			return ""
		}
	}
	return "<" + triggerID + "@" + domain + ">"
}

// send runs one SMTP session and returns the server's reply to the message.
// Closing the connection when ctx ends unblocks any read or write, so no
// goroutine outlives the call.
func (e *Email) send(ctx context.Context, to string, msg io.WriterTo) (string, error) {
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", e.addr)
	if err != nil {
		return "", fmt.Errorf("smtp dial %s: %w", e.addr, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	c, err := e.open(ctx, conn)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.Mail(e.from.Address, nil); err != nil {
		return "", fmt.Errorf("smtp mail from: %w", err)
	}
	if err := c.Rcpt(to, nil); err != nil {
		return "", fmt.Errorf("smtp rcpt to: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return "", fmt.Errorf("smtp data: %w", err)
	}
	if _, err := msg.WriteTo(w); err != nil {
		return "", fmt.Errorf("smtp write message: %w", err)
	}
	resp, err := w.CloseWithResponse()
	if err != nil {
		return "", fmt.Errorf("smtp end of data: %w", err)
	}
	_ = c.Quit() // the message is accepted; a failed QUIT changes nothing
	return resp.StatusText, nil
}

// open starts TLS as configured, greets and authenticates.
func (e *Email) open(ctx context.Context, conn net.Conn) (*smtp.Client, error) {
	var c *smtp.Client
	switch e.tlsMode {
	case TLSImplicit:
		tc := tls.Client(conn, e.tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("smtp tls handshake with %s: %w", e.addr, err)
		}
		c = smtp.NewClient(tc)
	case TLSStartTLS:
		var err error
		if c, err = smtp.NewClientStartTLS(conn, e.tlsConf); err != nil {
			return nil, fmt.Errorf("smtp starttls with %s: %w", e.addr, err)
		}
	default:
		c = smtp.NewClient(conn)
	}
	// EHLO now (again after STARTTLS) to surface greeting errors and learn
	// the AUTH mechanisms.
	if err := c.Hello("localhost"); err != nil {
		c.Close()
		return nil, fmt.Errorf("smtp hello %s: %w", e.addr, err)
	}
	if e.user == "" {
		return c, nil
	}
	if err := e.auth(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// auth authenticates with PLAIN, or LOGIN when the server offers only that.
func (e *Email) auth(c *smtp.Client) error {
	var mech sasl.Client
	switch {
	case c.SupportsAuth(sasl.Plain):
		mech = sasl.NewPlainClient("", e.user, e.pass)
	case c.SupportsAuth(sasl.Login):
		mech = sasl.NewLoginClient(e.user, e.pass)
	default:
		return errors.New("smtp auth: server offers neither PLAIN nor LOGIN")
	}
	if err := c.Auth(mech); err != nil {
		return fmt.Errorf("smtp auth: %w", err)
	}
	return nil
}

// classifySMTP marks 5xx replies permanent and makes a context error visible
// to errors.Is when the failure was the connection closed under it.
func classifySMTP(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w: %w", ctxErr, err)
		}
		return err
	}
	if code := smtpCode(err); code >= 500 && code <= 599 {
		return task.Permanent(err)
	}
	return err
}

// smtpCode returns the SMTP reply code carried by err, or 0.
func smtpCode(err error) int {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code
	}
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return 0
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var _ Executor = (*Email)(nil)
