package server

import (
	"net"
	"testing"
	"time"

	"cronsheet/config"
)

// TestStopWithUnusedConnection: a connection that sent no request (a
// client that dialled ahead of need) does not hold a graceful stop: Run
// returns nil within the shutdown timeout (http.Server.Shutdown alone
// counts it active until it is 5 s old).
func TestStopWithUnusedConnection(t *testing.T) {
	b := setup(t, func(c *config.Config) { c.ShutdownTimeout = 2 * time.Second })
	conn, err := net.Dial("tcp", b.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Let the server accept it (StateNew) before the stop begins.
	if code := b.call(t, "GET", "/healthz", nil, nil); code != 200 {
		t.Fatalf("healthz: %d", code)
	}
	b.stop() // fails the test when Run returns an error
}
