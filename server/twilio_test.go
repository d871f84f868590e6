package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// newTwilioStandIn serves Twilio's Messages endpoint for account ACtest and
// returns its base URL.
func newTwilioStandIn(t *testing.T, rec *smsServer) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if r.Method != http.MethodPost || r.URL.Path != "/2010-04-01/Accounts/ACtest/Messages.json" ||
			!ok || user != "ACtest" || pass != "token" {
			http.Error(w, `{"code":20404,"message":"not found"}`, http.StatusNotFound)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec.mu.Lock()
		rec.forms = append(rec.forms, r.PostForm)
		n := len(rec.forms)
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"sid":"SM%032d","status":"queued","to":%q,"from":%q,"body":%q}`,
			n, r.PostForm.Get("To"), r.PostForm.Get("From"), r.PostForm.Get("Body"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
