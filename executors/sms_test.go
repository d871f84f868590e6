package executors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	twclient "github.com/twilio/twilio-go/client"

	"cronsheet/executors"
	"cronsheet/task"
)

const (
	testSID   = "AC0123456789abcdef0123456789abcdef"
	testToken = "authtoken0123456789"
	testFrom  = "+15005550006"
)

// twilioRequest is what the fake Twilio API saw.
type twilioRequest struct {
	Method, Path, ContentType string
	User, Pass                string
	AuthOK                    bool
	To, From, Body            string
}

type smsBundle struct {
	srv *httptest.Server

	mu   sync.Mutex
	reqs []twilioRequest
}

func (b *smsBundle) requests() []twilioRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]twilioRequest(nil), b.reqs...)
}

// setupTwilio starts a fake Twilio API that records each request and then
// calls respond (nil: 201 with a Twilio-like message).
func setupTwilio(t *testing.T, respond http.HandlerFunc) *smsBundle {
	t.Helper()
	b := &smsBundle{}
	respond = cmpHandler(respond, twilioCreated)
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		user, pass, ok := r.BasicAuth()
		b.mu.Lock()
		b.reqs = append(b.reqs, twilioRequest{
			Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"),
			User: user, Pass: pass, AuthOK: ok,
			To: r.PostForm.Get("To"), From: r.PostForm.Get("From"), Body: r.PostForm.Get("Body"),
		})
		b.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func cmpHandler(h, def http.HandlerFunc) http.HandlerFunc {
	if h == nil {
		return def
	}
	return h
}

// twilioCreated answers like Twilio's Messages API on success.
func twilioCreated(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"sid":          "SM0123456789abcdef0123456789abcdef",
		"account_sid":  testSID,
		"status":       "queued",
		"to":           r.PostForm.Get("To"),
		"from":         r.PostForm.Get("From"),
		"body":         r.PostForm.Get("Body"),
		"num_segments": "1",
		"direction":    "outbound-api",
	})
}

// twilioError answers with Twilio's error JSON and extra headers.
func twilioError(status, code int, headers map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"code": %d, "message": "error %d", "more_info": "https://www.twilio.com/docs/errors/%d", "status": %d}`,
			code, code, code, status)
	}
}

// plainError answers with a non-JSON body, as a proxy in front of Twilio might.
func plainError(status int, headers map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		fmt.Fprint(w, "<html><body>unavailable</body></html>")
	}
}

func (b *smsBundle) config() executors.SMSConfig {
	return executors.SMSConfig{AccountSID: testSID, AuthToken: testToken, From: testFrom, BaseURL: b.srv.URL}
}

func newSMS(t *testing.T, cfg executors.SMSConfig) *executors.SMS {
	t.Helper()
	s, err := executors.NewSMS(nil, cfg)
	if err != nil {
		t.Fatalf("NewSMS: %v", err)
	}
	return s
}

func smsDelivery() task.Delivery {
	return task.Delivery{
		TaskID:    "task-1",
		TriggerID: "trg-7",
		Attempt:   1,
		Channel:   task.ChannelSMS,
		To:        "+14155550100",
		Body:      "Rappel: réunion à 10h & café",
	}
}

func TestSMS(t *testing.T) {
	t.Parallel()

	t.Run("SendsMessage", func(t *testing.T) {
		t.Parallel()
		b := setupTwilio(t, nil)
		d := smsDelivery()

		out, err := newSMS(t, b.config()).Execute(context.Background(), d)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if !strings.Contains(out, "SM0123456789abcdef0123456789abcdef") || !strings.Contains(out, "queued") {
			t.Errorf("output = %q, want the message sid and status", out)
		}
		reqs := b.requests()
		if len(reqs) != 1 {
			t.Fatalf("got %d requests, want 1", len(reqs))
		}
		want := twilioRequest{
			Method: http.MethodPost, Path: "/2010-04-01/Accounts/" + testSID + "/Messages.json",
			ContentType: "application/x-www-form-urlencoded",
			User:        testSID, Pass: testToken, AuthOK: true,
			To: d.To, From: testFrom, Body: d.Body,
		}
		if reqs[0] != want {
			t.Errorf("request = %+v\nwant      %+v", reqs[0], want)
		}
	})

	t.Run("BaseURLPathAndOwnHTTPClient", func(t *testing.T) {
		t.Parallel()
		b := setupTwilio(t, nil)
		cfg := b.config()
		cfg.BaseURL = b.srv.URL + "/twilio/"
		cfg.HTTPClient = b.srv.Client()

		if _, err := newSMS(t, cfg).Execute(context.Background(), smsDelivery()); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if reqs := b.requests(); len(reqs) != 1 || reqs[0].Path != "/twilio/2010-04-01/Accounts/"+testSID+"/Messages.json" {
			t.Errorf("requests = %+v, want one under /twilio/", reqs)
		}
	})

	t.Run("InvalidPhoneIsPermanentWithoutRequest", func(t *testing.T) {
		t.Parallel()
		b := setupTwilio(t, nil)
		s := newSMS(t, b.config())
		for _, to := range []string{"", "4155550100", "+0155550100", "+1 415 555 0100", "+1415", "+1234567890123456"} {
			d := smsDelivery()
			d.To = to
			_, err := s.Execute(context.Background(), d)
			if !task.IsPermanent(err) || !errors.Is(err, task.ErrInvalid) {
				t.Errorf("To %q: err = %v, want permanent ErrInvalid", to, err)
			}
		}
		if n := len(b.requests()); n != 0 {
			t.Errorf("got %d requests, want 0", n)
		}
	})

	t.Run("ConnectionRefusedIsRetryable", func(t *testing.T) {
		t.Parallel()
		host, port := closedPort(t)
		cfg := executors.SMSConfig{AccountSID: testSID, AuthToken: testToken, From: testFrom,
			BaseURL: "http://" + net.JoinHostPort(host, fmt.Sprint(port))}

		_, err := newSMS(t, cfg).Execute(context.Background(), smsDelivery())
		var opErr *net.OpError
		if !errors.As(err, &opErr) || task.IsPermanent(err) {
			t.Fatalf("err = %v, want a retryable *net.OpError", err)
		}
		if _, ok := task.RetryDelay(err); ok {
			t.Errorf("RetryDelay set on %v", err)
		}
	})

	t.Run("ContextCancelledReturnsPromptly", func(t *testing.T) {
		t.Parallel()
		arrived := make(chan struct{}, 1)
		release := make(chan struct{})
		b := setupTwilio(t, func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		t.Cleanup(func() { close(release) }) // runs before the server's Close
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()

		errc := make(chan error, 1)
		go func() {
			_, err := newSMS(t, b.config()).Execute(ctx, smsDelivery())
			errc <- err
		}()
		<-arrived
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
}

func TestSMSErrors(t *testing.T) {
	t.Parallel()
	inAnHour := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name       string
		respond    http.HandlerFunc
		permanent  bool
		retryDelay time.Duration // 0: no RetryDelay
		twilioCode int           // 0: not checked
	}{
		{"InvalidTo21211", twilioError(400, 21211, nil), true, 0, 21211},
		{"Unauthorized20003", twilioError(401, 20003, nil), true, 0, 20003},
		{"NotFound", plainError(404, nil), true, 0, 0},
		{"TooManyRequestsRetryAfter7", twilioError(429, 20429, map[string]string{"Retry-After": "7"}), false, 7 * time.Second, 20429},
		{"TooManyRequestsNoHeader", twilioError(429, 20429, nil), false, executors.DefaultRetryAfter, 20429},
		{"TooManyRequestsPlainBody", plainError(429, map[string]string{"Retry-After": "7"}), false, 7 * time.Second, 0},
		{"TooManyRequestsBadHeader", twilioError(429, 20429, map[string]string{"Retry-After": "soon"}), false, executors.DefaultRetryAfter, 0},
		{"ServiceUnavailable", plainError(503, nil), false, 0, 0},
		{"InternalError", twilioError(500, 20500, nil), false, 0, 20500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupTwilio(t, tt.respond)

			_, err := newSMS(t, b.config()).Execute(context.Background(), smsDelivery())
			if err == nil {
				t.Fatal("Execute succeeded, want an error")
			}
			if got := task.IsPermanent(err); got != tt.permanent {
				t.Errorf("IsPermanent = %v, want %v (err: %v)", got, tt.permanent, err)
			}
			delay, ok := task.RetryDelay(err)
			if ok != (tt.retryDelay != 0) || delay != tt.retryDelay {
				t.Errorf("RetryDelay = %v, %v; want %v (err: %v)", delay, ok, tt.retryDelay, err)
			}
			var te *twclient.TwilioRestError
			if tt.twilioCode != 0 && (!errors.As(err, &te) || te.Code != tt.twilioCode) {
				t.Errorf("err = %v, want Twilio code %d", err, tt.twilioCode)
			}
		})
	}

	t.Run("TooManyRequestsRetryAfterDate", func(t *testing.T) {
		t.Parallel()
		b := setupTwilio(t, twilioError(429, 20429, map[string]string{"Retry-After": inAnHour}))

		_, err := newSMS(t, b.config()).Execute(context.Background(), smsDelivery())
		if delay, ok := task.RetryDelay(err); !ok || delay < 58*time.Minute || delay > time.Hour {
			t.Errorf("RetryDelay = %v, %v; want about 1h (err: %v)", delay, ok, err)
		}
	})
}

func TestNewSMS(t *testing.T) {
	t.Parallel()
	ok := executors.SMSConfig{AccountSID: testSID, AuthToken: testToken, From: testFrom}
	with := func(f func(*executors.SMSConfig)) executors.SMSConfig {
		c := ok
		f(&c)
		return c
	}
	tests := []struct {
		name    string
		cfg     executors.SMSConfig
		wantErr bool
	}{
		{"Valid", ok, false},
		{"AlphanumericSender", with(func(c *executors.SMSConfig) { c.From = "Cronsheet" }), false},
		{"NoSID", with(func(c *executors.SMSConfig) { c.AccountSID = "" }), true},
		{"TokenWithSymbols", with(func(c *executors.SMSConfig) { c.AuthToken = "a/b" }), true},
		{"NoFrom", with(func(c *executors.SMSConfig) { c.From = "" }), true},
		{"BadFromNumber", with(func(c *executors.SMSConfig) { c.From = "+0123" }), true},
		{"BadBaseURL", with(func(c *executors.SMSConfig) { c.BaseURL = "127.0.0.1:8080" }), true},
		{"NegativeTimeout", with(func(c *executors.SMSConfig) { c.Timeout = -time.Second }), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := executors.NewSMS(nil, tt.cfg)
			if (err != nil) != tt.wantErr {
				t.Errorf("NewSMS err = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}
