package configured

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"cronsheet/config"
	"cronsheet/task"
)

// TestShippedConfigRefusesLocal: under the shipped config.yaml an HTTP
// target cannot name loopback, link-local or documentation addresses
// (refused when saved, naming http.url), and a delivery to a hook on
// 127.0.0.1 is refused with a clear error and never reaches it; allowing
// 127.0.0.0/8 in http.allow (the documented opt-in) delivers.
func TestShippedConfigRefusesLocal(t *testing.T) {
	cfg, err := config.Load("../../config.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatalf("shipped config.yaml: %v", err)
	}
	x, err := New(slog.New(slog.DiscardHandler), &memOutbox{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for host, class := range map[string]string{
		"127.0.0.1": "loopback", "[::1]": "loopback", "169.254.169.254": "link-local",
		"192.0.2.10": "documentation", "198.51.100.7": "documentation", "203.0.113.9": "documentation",
		"[2001:db8::1]": "documentation",
	} {
		tg := &task.Target{ID: "hook", Kind: task.ChannelHTTP, HTTP: &task.HTTPTarget{Method: "POST", URL: "http://" + host + ":9000/hook"}}
		err := x.CheckTarget(tg)
		var ve *task.ValidationError
		if !errors.As(err, &ve) || ve.Field != "http.url" || !strings.Contains(err.Error(), class+" addresses need an allow entry in the live settings' allow list") {
			t.Errorf("CheckTarget(%s) = %v, want a refusal of field http.url naming %s", host, err, class)
		}
	}

	var got atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got.Add(1) }))
	defer hook.Close()
	d := task.Delivery{TaskID: "t1", TriggerID: "trg-1", Channel: task.ChannelHTTP,
		Target: &task.Target{ID: "hook", Kind: task.ChannelHTTP, State: task.TargetRunning,
			HTTP: &task.HTTPTarget{Method: "POST", URL: hook.URL + "/hook"}}}
	_, err = x.Registry.Execute(context.Background(), d)
	if !task.IsPermanent(err) || !strings.Contains(err.Error(), "callback host 127.0.0.1 refused: loopback addresses need an allow entry in the live settings' allow list") {
		t.Errorf("delivery to 127.0.0.1 under the shipped config: %v, want a permanent refusal naming http.allow", err)
	}
	if n := got.Load(); n != 0 {
		t.Errorf("the hook received %d requests under the shipped config, want 0", n)
	}

	cfg.HTTP.Allow = []string{"127.0.0.0/8", "::1/128"}
	dev, err := New(slog.New(slog.DiscardHandler), &memOutbox{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if _, err := dev.Registry.Execute(context.Background(), d); err != nil {
		t.Fatalf("delivery with loopback allowed: %v", err)
	}
	if n := got.Load(); n != 1 {
		t.Errorf("the hook received %d requests with loopback allowed, want 1", n)
	}
}
