package executors_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"cronsheet/executors"
	"cronsheet/task"
)

// received is one message as the test SMTP server saw it.
type received struct {
	From string
	To   []string
	Data []byte
	TLS  bool
	User string
}

// smtpBackend is a go-smtp Backend that stores messages and answers with
// the configured errors. Its config fields are set before the server starts.
type smtpBackend struct {
	sessionErr, mailErr, rcptErr, dataErr error
	user, pass                            string // non-empty: offer AUTH PLAIN

	mu       sync.Mutex
	msgs     []received
	sessions int
}

func (b *smtpBackend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	b.mu.Lock()
	b.sessions++
	b.mu.Unlock()
	if b.sessionErr != nil {
		return nil, b.sessionErr
	}
	return &smtpSession{b: b, conn: c}, nil
}

func (b *smtpBackend) messages() []received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]received(nil), b.msgs...)
}

func (b *smtpBackend) sessionCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessions
}

type smtpSession struct {
	b    *smtpBackend
	conn *smtp.Conn
	cur  received
}

var _ smtp.AuthSession = (*smtpSession)(nil)

func (s *smtpSession) AuthMechanisms() []string {
	if s.b.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.b.user || pass != s.b.pass {
			return smtp.ErrAuthFailed
		}
		s.cur.User = user
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.b.mailErr != nil {
		return s.b.mailErr
	}
	s.cur.From = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.b.rcptErr != nil {
		return s.b.rcptErr
	}
	s.cur.To = append(s.cur.To, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if s.b.dataErr != nil {
		return s.b.dataErr
	}
	s.cur.Data = data
	_, s.cur.TLS = s.conn.TLSConnectionState()
	s.b.mu.Lock()
	s.b.msgs = append(s.b.msgs, s.cur)
	s.b.mu.Unlock()
	return nil
}

func (s *smtpSession) Reset()        { s.cur = received{User: s.cur.User} }
func (s *smtpSession) Logout() error { return nil }

// smtpOpts says how to start the test server.
type smtpOpts struct {
	tls      *tls.Config // offered with STARTTLS, or used for implicit TLS
	implicit bool
}

type emailBundle struct {
	backend *smtpBackend
	host    string
	port    int
}

// setupSMTP starts a go-smtp server for be on 127.0.0.1:0, closed at cleanup.
func setupSMTP(t *testing.T, be *smtpBackend, opts smtpOpts) *emailBundle {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := smtp.NewServer(be)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.TLSConfig = opts.tls
	if opts.implicit {
		l = tls.NewListener(l, opts.tls)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Close()
		// Close misses a listener that Serve has not registered yet.
		l.Close()
		<-done
	})
	addr := l.Addr().(*net.TCPAddr)
	return &emailBundle{backend: be, host: "127.0.0.1", port: addr.Port}
}

// config returns an EmailConfig aimed at the bundle's server.
func (b *emailBundle) config(tlsMode string) executors.EmailConfig {
	return executors.EmailConfig{
		Host:    b.host,
		Port:    b.port,
		From:    "Cronsheet <noreply@cronsheet.test>",
		TLS:     tlsMode,
		Timeout: 10 * time.Second,
	}
}

func newEmail(t *testing.T, cfg executors.EmailConfig) *executors.Email {
	t.Helper()
	e, err := executors.NewEmail(nil, cfg)
	if err != nil {
		t.Fatalf("NewEmail: %v", err)
	}
	return e
}

func emailDelivery() task.Delivery {
	return task.Delivery{
		TaskID:    "task-1",
		TriggerID: "trg-42",
		Attempt:   1,
		Channel:   task.ChannelEmail,
		To:        "ann@example.com",
		Subject:   "Rappel: réunion à 10h",
		Body:      "Hello Ann,\n.\nline after a lone dot, and ünïcode.\n",
	}
}

// testTLS returns a server config with a fresh self-signed certificate for
// 127.0.0.1 and a client config trusting it.
func testTLS(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cronsheet test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	return server, &tls.Config{RootCAs: roots}
}

// parsed is a received message decoded for assertions.
type parsed struct {
	header mail.Header
	body   string
}

func parseMessage(t *testing.T, data []byte) parsed {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("read message: %v\n%s", err, data)
	}
	var r io.Reader = m.Body
	if strings.EqualFold(m.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		r = quotedprintable.NewReader(r)
	}
	body, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return parsed{header: m.Header, body: strings.ReplaceAll(string(body), "\r\n", "\n")}
}

func decodeHeader(t *testing.T, v string) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(v)
	if err != nil {
		t.Fatalf("decode header %q: %v", v, err)
	}
	return s
}

// onlyMessage returns the single message the backend received.
func onlyMessage(t *testing.T, be *smtpBackend) received {
	t.Helper()
	msgs := be.messages()
	if len(msgs) != 1 {
		t.Fatalf("server received %d messages, want 1", len(msgs))
	}
	return msgs[0]
}

func TestEmail(t *testing.T) {
	t.Parallel()

	t.Run("DeliversWithoutTLSEvenWhenOffered", func(t *testing.T) {
		t.Parallel()
		serverTLS, _ := testTLS(t)
		b := setupSMTP(t, &smtpBackend{}, smtpOpts{tls: serverTLS})
		d := emailDelivery()

		out, err := newEmail(t, b.config(executors.TLSNone)).Execute(context.Background(), d)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if !strings.HasPrefix(out, "smtp 250") {
			t.Errorf("output = %q, want prefix %q", out, "smtp 250")
		}
		got := onlyMessage(t, b.backend)
		if got.TLS {
			t.Error("session used TLS, want plain SMTP with TLS none")
		}
		if got.From != "noreply@cronsheet.test" || len(got.To) != 1 || got.To[0] != d.To {
			t.Errorf("envelope = %q -> %q, want noreply@cronsheet.test -> [%s]", got.From, got.To, d.To)
		}
		m := parseMessage(t, got.Data)
		checks := map[string]string{
			"From":                    `"Cronsheet" <noreply@cronsheet.test>`,
			"To":                      d.To,
			"Subject":                 d.Subject,
			executors.HeaderTriggerID: d.TriggerID,
		}
		for k, want := range checks {
			if got := decodeHeader(t, m.header.Get(k)); got != want {
				t.Errorf("header %s = %q, want %q", k, got, want)
			}
		}
		if ct := m.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("Content-Type = %q, want text/plain", ct)
		}
		if m.body != d.Body {
			t.Errorf("body = %q, want %q", m.body, d.Body)
		}
	})

	t.Run("StartTLS", func(t *testing.T) {
		t.Parallel()
		serverTLS, clientTLS := testTLS(t)
		b := setupSMTP(t, &smtpBackend{}, smtpOpts{tls: serverTLS})
		cfg := b.config(executors.TLSStartTLS)
		cfg.TLSConfig = clientTLS

		if _, err := newEmail(t, cfg).Execute(context.Background(), emailDelivery()); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if got := onlyMessage(t, b.backend); !got.TLS {
			t.Error("session without TLS, want STARTTLS")
		}
	})

	t.Run("ImplicitTLS", func(t *testing.T) {
		t.Parallel()
		serverTLS, clientTLS := testTLS(t)
		b := setupSMTP(t, &smtpBackend{}, smtpOpts{tls: serverTLS, implicit: true})
		cfg := b.config(executors.TLSImplicit)
		cfg.TLSConfig = clientTLS

		if _, err := newEmail(t, cfg).Execute(context.Background(), emailDelivery()); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if got := onlyMessage(t, b.backend); !got.TLS {
			t.Error("session without TLS, want implicit TLS")
		}
	})

	t.Run("StartTLSNotOfferedIsRetryable", func(t *testing.T) {
		t.Parallel()
		b := setupSMTP(t, &smtpBackend{}, smtpOpts{})

		_, err := newEmail(t, b.config(executors.TLSStartTLS)).Execute(context.Background(), emailDelivery())
		if err == nil || task.IsPermanent(err) {
			t.Fatalf("err = %v, want a retryable error", err)
		}
		if n := len(b.backend.messages()); n != 0 {
			t.Errorf("server received %d messages over plain SMTP, want 0", n)
		}
	})

	t.Run("UntrustedCertificateIsRetryable", func(t *testing.T) {
		t.Parallel()
		serverTLS, _ := testTLS(t)
		b := setupSMTP(t, &smtpBackend{}, smtpOpts{tls: serverTLS})

		_, err := newEmail(t, b.config(executors.TLSStartTLS)).Execute(context.Background(), emailDelivery())
		var unknownAuthority x509.UnknownAuthorityError
		if !errors.As(err, &unknownAuthority) || task.IsPermanent(err) {
			t.Fatalf("err = %v, want a retryable x509.UnknownAuthorityError", err)
		}
	})

	t.Run("Auth", func(t *testing.T) {
		t.Parallel()
		b := setupSMTP(t, &smtpBackend{user: "mailer", pass: "s3cret"}, smtpOpts{})
		cfg := b.config(executors.TLSNone)
		cfg.Username, cfg.Password = "mailer", "s3cret"

		if _, err := newEmail(t, cfg).Execute(context.Background(), emailDelivery()); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if got := onlyMessage(t, b.backend); got.User != "mailer" {
			t.Errorf("authenticated user = %q, want mailer", got.User)
		}
	})

	t.Run("HeaderInjection", func(t *testing.T) {
		t.Parallel()
		b := setupSMTP(t, &smtpBackend{}, smtpOpts{})
		d := emailDelivery()
		d.Subject = "hi\r\nBcc: eve@example.com"
		d.TriggerID = "x\r\nBcc: eve@example.com"

		if _, err := newEmail(t, b.config(executors.TLSNone)).Execute(context.Background(), d); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		got := onlyMessage(t, b.backend)
		m := parseMessage(t, got.Data)
		if len(got.To) != 1 || m.header.Get("Bcc") != "" {
			t.Errorf("recipients %q, Bcc header %q: header injected", got.To, m.header.Get("Bcc"))
		}
		if s := decodeHeader(t, m.header.Get("Subject")); s != d.Subject {
			t.Errorf("Subject = %q, want %q", s, d.Subject)
		}
	})
}

func TestEmailErrors(t *testing.T) {
	t.Parallel()

	smtpErr := func(code int, msg string) error {
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCodeNotSet, Message: msg}
	}
	tests := []struct {
		name      string
		backend   *smtpBackend
		permanent bool
		code      int
	}{
		{"Rcpt550UserUnknown", &smtpBackend{rcptErr: smtpErr(550, "user unknown")}, true, 550},
		{"Mail553", &smtpBackend{mailErr: smtpErr(553, "sender not allowed")}, true, 553},
		{"Data554", &smtpBackend{dataErr: smtpErr(554, "rejected as spam")}, true, 554},
		{"AuthFailed535", &smtpBackend{user: "mailer", pass: "other"}, true, 535},
		{"Mail421", &smtpBackend{mailErr: smtpErr(421, "shutting down")}, false, 421},
		{"Rcpt450", &smtpBackend{rcptErr: smtpErr(450, "mailbox busy")}, false, 450},
		{"Rcpt451", &smtpBackend{rcptErr: smtpErr(451, "try again later")}, false, 451},
		{"Data452", &smtpBackend{dataErr: smtpErr(452, "insufficient storage")}, false, 452},
		{"Session451", &smtpBackend{sessionErr: errors.New("busy")}, false, 451},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupSMTP(t, tt.backend, smtpOpts{})
			cfg := b.config(executors.TLSNone)
			if tt.backend.user != "" {
				cfg.Username, cfg.Password = "mailer", "wrong"
			}

			_, err := newEmail(t, cfg).Execute(context.Background(), emailDelivery())
			if err == nil {
				t.Fatal("Execute succeeded, want an error")
			}
			if got := task.IsPermanent(err); got != tt.permanent {
				t.Errorf("IsPermanent = %v, want %v (err: %v)", got, tt.permanent, err)
			}
			var se *smtp.SMTPError
			if !errors.As(err, &se) || se.Code != tt.code {
				t.Errorf("err = %v, want SMTP reply %d", err, tt.code)
			}
			if _, ok := task.RetryDelay(err); ok {
				t.Errorf("RetryDelay set on %v, want plain backoff", err)
			}
		})
	}

	t.Run("ConnectionRefusedIsRetryable", func(t *testing.T) {
		t.Parallel()
		host, port := closedPort(t)
		e := newEmail(t, executors.EmailConfig{Host: host, Port: port, From: "a@b.test", TLS: executors.TLSNone})

		_, err := e.Execute(context.Background(), emailDelivery())
		var opErr *net.OpError
		if !errors.As(err, &opErr) || task.IsPermanent(err) {
			t.Fatalf("err = %v, want a retryable *net.OpError", err)
		}
	})

	t.Run("BadAddressIsPermanentWithoutDialling", func(t *testing.T) {
		t.Parallel()
		b := setupSMTP(t, &smtpBackend{}, smtpOpts{})
		e := newEmail(t, b.config(executors.TLSNone))
		for _, to := range []string{"", "not-an-address", "Ann <ann@example.com>", "ann@example.com\r\nRCPT TO:<eve@example.com>"} {
			d := emailDelivery()
			d.To = to
			_, err := e.Execute(context.Background(), d)
			if !task.IsPermanent(err) || !errors.Is(err, task.ErrInvalid) {
				t.Errorf("To %q: err = %v, want permanent ErrInvalid", to, err)
			}
		}
		if n := b.backend.sessionCount(); n != 0 {
			t.Errorf("server saw %d sessions, want 0", n)
		}
	})

	t.Run("ContextCancelledReturnsPromptly", func(t *testing.T) {
		t.Parallel()
		host, port, accepted := silentServer(t)
		e := newEmail(t, executors.EmailConfig{Host: host, Port: port, From: "a@b.test", TLS: executors.TLSNone, Timeout: time.Minute})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()

		errc := make(chan error, 1)
		go func() {
			_, err := e.Execute(ctx, emailDelivery())
			errc <- err
		}()
		<-accepted
		cancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) || task.IsPermanent(err) {
				t.Errorf("err = %v, want retryable context.Canceled", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Execute did not return after cancel")
		}
	})

	t.Run("TimeoutBoundsSilentServer", func(t *testing.T) {
		t.Parallel()
		host, port, _ := silentServer(t)
		e := newEmail(t, executors.EmailConfig{Host: host, Port: port, From: "a@b.test", TLS: executors.TLSNone, Timeout: 100 * time.Millisecond})

		start := time.Now()
		_, err := e.Execute(context.Background(), emailDelivery())
		if !errors.Is(err, context.DeadlineExceeded) || task.IsPermanent(err) {
			t.Errorf("err = %v, want retryable context.DeadlineExceeded", err)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("Execute took %v with a 100ms timeout", el)
		}
	})
}

func TestNewEmail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     executors.EmailConfig
		wantErr bool
	}{
		{"Defaults", executors.EmailConfig{Host: "smtp.example.com", From: "a@example.com"}, false},
		{"NoTLSLoopbackAuth", executors.EmailConfig{Host: "127.0.0.1", From: "a@example.com", TLS: "none", Username: "u"}, false},
		{"NoHost", executors.EmailConfig{From: "a@example.com"}, true},
		{"BadTLS", executors.EmailConfig{Host: "h", From: "a@example.com", TLS: "ssl"}, true},
		{"BadFrom", executors.EmailConfig{Host: "h", From: "nobody"}, true},
		{"BadPort", executors.EmailConfig{Host: "h", From: "a@example.com", Port: 70000}, true},
		{"NegativeTimeout", executors.EmailConfig{Host: "h", From: "a@example.com", Timeout: -time.Second}, true},
		{"CredentialsInClear", executors.EmailConfig{Host: "smtp.example.com", From: "a@example.com", TLS: "none", Username: "u"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := executors.NewEmail(nil, tt.cfg)
			if (err != nil) != tt.wantErr {
				t.Errorf("NewEmail err = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) (string, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return "127.0.0.1", port
}

// silentServer accepts connections and never answers. accepted is signalled
// at the first connection; everything is closed at cleanup.
func silentServer(t *testing.T) (host string, port int, accepted <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	acc := make(chan struct{}, 1)
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			select {
			case acc <- struct{}{}:
			default:
			}
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	return "127.0.0.1", l.Addr().(*net.TCPAddr).Port, acc
}
