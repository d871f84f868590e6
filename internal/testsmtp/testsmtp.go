// Package testsmtp runs a real SMTP server (github.com/emersion/go-smtp) on
// loopback for tests, keeping every message it accepts so a test can read
// back what cronsheet sent.
package testsmtp

import (
	"bytes"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Message is one accepted message.
type Message struct {
	From    string
	To      []string
	Subject string
	Header  mail.Header
	Body    string
	At      time.Time
}

// Server is a running SMTP server.
type Server struct {
	Host string
	Port int

	mu     sync.Mutex
	msgs   []Message
	notify chan struct{}
}

// Start starts a server on 127.0.0.1 with no TLS and no auth; it stops at
// the end of the test.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{notify: make(chan struct{}, 1)}
	srv := smtp.NewServer(backend{s})
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	s.Host, s.Port = "127.0.0.1", addr.Port
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return s
}

// Messages returns a copy of the messages received so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// WaitFor waits until at least n messages arrived or timeout passes, and
// returns what arrived.
func (s *Server) WaitFor(n int, timeout time.Duration) []Message {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if msgs := s.Messages(); len(msgs) >= n {
			return msgs
		}
		select {
		case <-s.notify:
		case <-deadline.C:
			return s.Messages()
		}
	}
}

func (s *Server) add(m Message) {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

type backend struct{ s *Server }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: b.s}, nil }

type session struct {
	s    *Server
	from string
	to   []string
}

func (se *session) Mail(from string, _ *smtp.MailOptions) error { se.from = from; return nil }
func (se *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	se.to = append(se.to, to)
	return nil
}
func (se *session) Reset()        { se.from, se.to = "", nil }
func (se *session) Logout() error { return nil }

func (se *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := Message{From: se.from, To: se.to, At: time.Now()}
	if parsed, err := mail.ReadMessage(bytes.NewReader(raw)); err == nil {
		m.Header = parsed.Header
		dec := new(mime.WordDecoder)
		m.Subject, _ = dec.DecodeHeader(parsed.Header.Get("Subject"))
		body, _ := io.ReadAll(quotedprintable.NewReader(parsed.Body))
		m.Body = string(body)
	}
	se.s.add(m)
	return nil
}
