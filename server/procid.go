package server

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procIdentity says which process an entry of the node registry names, in
// terms that cannot collide: the kernel's boot (boot id), the PID namespace
// the pid is counted in, and the process's start time (clock ticks since
// boot). Two containers sharing a hostname (host network) but not a PID
// namespace differ in PIDNS, so neither looks up the other's pid in its
// own namespace; a pid reused by another process differs in Start.
type procIdentity struct {
	Boot  string
	PIDNS string
	Start uint64
}

// procRoot is where the identity is read from; tests point it elsewhere.
type procRoot string

// selfIdentity reads this process's identity; its fields are empty where
// /proc does not tell them (not Linux), and an empty identity judges no
// peer gone (knownGone).
func (root procRoot) selfIdentity() procIdentity {
	var id procIdentity
	if b, err := os.ReadFile(string(root) + "/sys/kernel/random/boot_id"); err == nil {
		id.Boot = strings.TrimSpace(string(b))
	}
	if ns, err := os.Readlink(string(root) + "/self/ns/pid"); err == nil {
		id.PIDNS = ns
	}
	if st, ok := root.startTicks("self"); ok {
		id.Start = st
	}
	return id
}

// startTicks returns the start time of process pid ("self" or a number),
// field 22 of /proc/<pid>/stat, and false when there is no such process
// (or /proc does not say).
func (root procRoot) startTicks(pid string) (uint64, bool) {
	b, err := os.ReadFile(string(root) + "/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields after it start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	const startField = 22 - 3 // fields 3… follow the ')'
	if len(f) <= startField {
		return 0, false
	}
	v, err := strconv.ParseUint(f[startField], 10, 64)
	return v, err == nil
}

// complete reports whether every part of the identity is known.
func (p procIdentity) complete() bool { return p.Boot != "" && p.PIDNS != "" && p.Start != 0 }

// incarnationOf is the registry's incarnation of a process: random (two
// processes of one node id differ) followed by its identity when
// complete. The incarnation is opaque text to the store, so the identity
// needs no column of its own.
func incarnationOf(random string, id procIdentity) string {
	if !id.complete() {
		return random
	}
	return fmt.Sprintf("%s|%s|%s|%d", random, id.Boot, id.PIDNS, id.Start)
}

// instanceOf is the random part of an incarnation: the instance id a
// process's deliveries carry (X-Cronsheet-Instance).
func instanceOf(incarnation string) string {
	random, _, _ := strings.Cut(incarnation, "|")
	return random
}

// identityOf reads the identity back from an incarnation; false for one
// without it (an older version, or a host without /proc).
func identityOf(incarnation string) (procIdentity, bool) {
	parts := strings.Split(incarnation, "|")
	if len(parts) != 4 {
		return procIdentity{}, false
	}
	start, err := strconv.ParseUint(parts[3], 10, 64)
	id := procIdentity{Boot: parts[1], PIDNS: parts[2], Start: start}
	return id, err == nil && id.complete()
}

// knownGone reports whether the process an entry names is known to have
// exited: it ran under this boot of this kernel, in this PID namespace,
// and its pid is absent or now names a process started at another time.
// Anything else (another machine, container or boot, an entry without
// an identity) is not known from here.
func (root procRoot) knownGone(self procIdentity, incarnation string, pid int) bool {
	other, ok := identityOf(incarnation)
	if !ok || !self.complete() || other.Boot != self.Boot || other.PIDNS != self.PIDNS || pid <= 0 {
		return false
	}
	start, alive := root.startTicks(strconv.Itoa(pid))
	return !alive || start != other.Start
}
