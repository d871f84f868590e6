package executors

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitExited blocks until process pid has exited, without reaping it: the
// zombie keeps its pid, and so its process group id, from being reused.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
