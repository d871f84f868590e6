//go:build !linux

package executors

import "errors"

// waitExited is Linux-only (waitid with WNOWAIT); elsewhere the group is
// not killed after a normal exit.
func waitExited(int) error { return errors.ErrUnsupported }
