package executors

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	twclient "github.com/twilio/twilio-go/client"
	twapi "github.com/twilio/twilio-go/rest/api/v2010"

	"cronsheet/task"
)

// DefaultRetryAfter is the delay used for an HTTP 429 without a usable
// Retry-After header.
const DefaultRetryAfter = 30 * time.Second

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// SMSConfig configures an SMS executor.
type SMSConfig struct {
	// AccountSID and AuthToken are the Twilio credentials (letters and
	// digits only, as twilio-go requires). Required.
	AccountSID, AuthToken string
	// From is the sender: an E.164 number, a short code or an alphanumeric
	// sender id. Required.
	From string
	// BaseURL, when set (e.g. "http://127.0.0.1:PORT"), receives every request
	// instead of https://api.twilio.com: scheme and host are replaced and its
	// path, if any, is prefixed. Empty: Twilio.
	BaseURL string
	// HTTPClient supplies the transport (nil: http.DefaultTransport) and, when
	// Timeout is zero, the timeout. Redirects are never followed.
	HTTPClient *http.Client
	// Timeout bounds one request; the caller's context deadline applies when
	// sooner. Default: HTTPClient.Timeout, else 10s.
	Timeout time.Duration
}

// SMS sends text messages with twilio-go's Messages API.
type SMS struct {
	logger    *slog.Logger
	sid       string
	token     string
	from      string
	baseURL   *url.URL
	transport http.RoundTripper
	timeout   time.Duration
}

// NewSMS validates cfg and returns an SMS executor. logger may be nil.
func NewSMS(logger *slog.Logger, cfg SMSConfig) (*SMS, error) {
	if !alphanumeric(cfg.AccountSID) || !alphanumeric(cfg.AuthToken) {
		return nil, errors.New("sms config: account sid and auth token are required, letters and digits only")
	}
	if cfg.From == "" {
		return nil, errors.New("sms config: from is required")
	}
	if strings.HasPrefix(cfg.From, "+") {
		if err := task.CheckPhone(cfg.From); err != nil {
			return nil, fmt.Errorf("sms config: from: %w", err)
		}
	}
	s := &SMS{
		logger:    componentLogger(logger, "executors.sms"),
		sid:       cfg.AccountSID,
		token:     cfg.AuthToken,
		from:      cfg.From,
		transport: http.DefaultTransport,
		timeout:   cmp.Or(cfg.Timeout, 10*time.Second),
	}
	if cfg.HTTPClient != nil {
		if cfg.HTTPClient.Transport != nil {
			s.transport = cfg.HTTPClient.Transport
		}
		s.timeout = cmp.Or(cfg.Timeout, cfg.HTTPClient.Timeout, 10*time.Second)
	}
	if s.timeout < 0 {
		return nil, fmt.Errorf("sms config: negative timeout %v", s.timeout)
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("sms config: base url %q, want http(s)://host[:port]", cfg.BaseURL)
		}
		s.baseURL = u
	}
	return s, nil
}

// Execute sends d.Subject and d.Body (smsText) to the phone number d.To. An invalid d.To (checked
// before any request) and HTTP 4xx answers (e.g. Twilio 21211) are
// task.Permanent; HTTP 429 is task.RetryAfter with the Retry-After header (or
// DefaultRetryAfter); 5xx, network errors, timeouts and cancellation are
// retryable.
func (s *SMS) Execute(ctx context.Context, d task.Delivery) (string, error) {
	if err := task.CheckPhone(d.To); err != nil {
		return "", task.Permanent(fmt.Errorf("sms recipient: %w", err))
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()

	// twilio-go builds its requests with context.Background(), so each call
	// gets its own transport that carries ctx and records the response.
	rt := &twilioTransport{ctx: ctx, base: s.transport, baseURL: s.baseURL}
	api := twapi.NewApiServiceWithClient(s.client(rt))
	params := &twapi.CreateMessageParams{}
	params.SetTo(d.To).SetFrom(s.from).SetBody(smsText(d))
	msg, err := api.CreateMessage(params)
	if err != nil {
		return "", classifyTwilio(ctx, fmt.Errorf("twilio create message: %w", err), rt)
	}
	sid, status := deref(msg.Sid), deref(msg.Status)
	s.logger.DebugContext(ctx, "sms sent", "task_id", d.TaskID,
		"trigger_id", d.TriggerID, "attempt", d.Attempt, "sid", sid, "status", status)
	return task.Truncate(fmt.Sprintf("twilio sid %s status %s", sid, status), task.MaxOutput), nil
}

// client returns a twilio-go client whose HTTP requests go through rt.
func (s *SMS) client(rt *twilioTransport) *twclient.Client {
	c := &twclient.Client{
		Credentials: twclient.NewCredentials(s.sid, s.token),
		HTTPClient: &http.Client{
			Transport: rt,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}
	c.SetAccountSid(s.sid)
	return c
}

// twilioTransport serves one Execute call: it puts the call's context on the
// request, rewrites the URL to BaseURL when set, records the status and
// Retry-After of the response, and buffers error bodies (twilio-go does not
// close them).
type twilioTransport struct {
	ctx     context.Context
	base    http.RoundTripper
	baseURL *url.URL

	status     int
	retryAfter string
}

// RoundTrip implements http.RoundTripper.
func (t *twilioTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(t.ctx)
	if t.baseURL != nil {
		req.URL.Scheme = t.baseURL.Scheme
		req.URL.Host = t.baseURL.Host
		req.URL.Path = strings.TrimSuffix(t.baseURL.Path, "/") + req.URL.Path
		req.URL.RawPath = ""
		req.Host = ""
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	t.status = resp.StatusCode
	t.retryAfter = resp.Header.Get("Retry-After")
	if resp.StatusCode >= 400 {
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read %d response: %w", resp.StatusCode, err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	return resp, nil
}

// classifyTwilio decides retry or not from the recorded HTTP status, falling
// back to the status in twilio-go's error.
func classifyTwilio(ctx context.Context, err error, rt *twilioTransport) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w: %w", ctxErr, err)
		}
		return err
	}
	status := rt.status
	var te *twclient.TwilioRestError
	if status == 0 && errors.As(err, &te) {
		status = te.Status
	}
	switch {
	case status == http.StatusTooManyRequests:
		return task.RetryAfter(err, parseRetryAfter(rt.retryAfter, time.Now()))
	case status >= 500:
		return err
	case status >= 400:
		return task.Permanent(err)
	}
	return err
}

// parseRetryAfter reads a Retry-After value, in seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return DefaultRetryAfter
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0)
	}
	return DefaultRetryAfter
}

// alphanumeric reports whether s is non-empty letters and digits.
func alphanumeric(s string) bool {
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return s != ""
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

var _ Executor = (*SMS)(nil)

// smsText is the text an SMS carries for d: its subject (the row's title,
// an alert's or a flow step's subject) on the first line, then the body.
// An SMS has no subject of its own, so without this line the title was
// lost; a delivery with no subject sends the body alone.
func smsText(d task.Delivery) string {
	if d.Subject == "" {
		return d.Body
	}
	return d.Subject + "\n" + d.Body
}
