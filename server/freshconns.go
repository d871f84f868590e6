package server

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// freshConns tracks the HTTP connections that have not sent a request
// yet (http.StateNew). http.Server.Shutdown counts such a connection as
// active until it is 5 s old, so one a client opened ahead of need (a
// transport that dialled twice for one request, a load balancer's warm
// pool) would hold every graceful stop up to that long, and past a short
// shutdown_timeout make it fail. Once the listener is closed nothing will
// be read from them that the stop would serve, so shutdown closes them.
type freshConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// track is the http.Server's ConnState hook.
func (f *freshConns) track(c net.Conn, st http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if st == http.StateNew {
		if f.conns == nil {
			f.conns = map[net.Conn]struct{}{}
		}
		f.conns[c] = struct{}{}
		return
	}
	delete(f.conns, c)
}

// closeAll closes the connections that have sent no request yet.
func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		_ = c.Close()
		delete(f.conns, c)
	}
}

// shutdownHTTP shuts srv down gracefully within ctx (http.Server.Shutdown:
// the listener closed at once, requests under way finished), closing the
// fresh connections as it goes: one accepted just before the listener
// closed is closed on the next look.
func shutdownHTTP(ctx context.Context, srv *http.Server, fresh *freshConns) error {
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		fresh.closeAll()
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
	}
}
