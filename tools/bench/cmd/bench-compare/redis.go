package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"cronsheet/tools/bench/internal/benchkit"
)

// redisServer is a redis-server process of ours.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

// startRedis starts redis-server on a free loopback port with dir as its
// working directory, AOF on, and waits until it answers.
func startRedis(dir string) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found (Debian: apt-get install redis-server): %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--daemonize", "no",
		"--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	rd := &redisServer{addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd}
	rc := redis.NewClient(&redis.Options{Addr: rd.addr})
	defer rc.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if rc.Ping(context.Background()).Err() == nil {
			break
		}
		if time.Now().After(deadline) {
			rd.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer within 10 s (log: %s)", rd.addr, filepath.Join(dir, "redis.log"))
		}
	}
	v, _ := rc.Info(context.Background(), "server").Result()
	for line := range strings.SplitSeq(v, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			benchkit.Progress("redis-server %s on %s (AOF on)", s, rd.addr)
		}
	}
	return rd, nil
}

// stop ends the server (its own process) and waits for it.
func (r *redisServer) stop() {
	if r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
