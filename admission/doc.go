// Package admission decides when a delivery may go: per-group concurrency limits
// (one group per concurrency class, e.g. a target or a callback family) and
// token-bucket rate limits per callback host.
//
// A delivery calls [Controller.Acquire] before it sends and the returned
// release when it is done. Acquire waits, in FIFO order per group, until the
// group is under its limit, then for a token of the host's bucket. Nothing is
// ever dropped: a request waits until it gets through or its context ends.
// [Controller.AcquireWith] adds a gate of the caller's between the group
// and the host token (the server's cluster-wide slot of the group, taken
// in the store): only requests at the head of the group's FIFO here wait
// on it.
//
// The global worker pool (how many deliveries run at once in all) stays with
// the caller (fire.Config.MaxDeliveries). Take that slot after Acquire
// returns, so that requests waiting here on a busy group or a slow host do
// not hold global slots and block other groups.
//
// admission imports no project package; its only outside dependencies are
// golang.org/x/time/rate and clockwork.
package admission
