package intake

import (
	"container/list"
	"context"
	"errors"
	"sync"

	"cronsheet/jobs"
	"cronsheet/task"
)

// Submitter is what the intake channels need from the jobs service.
type Submitter interface {
	// Submit validates and stores one job (see jobs.Service.Submit).
	Submit(ctx context.Context, r jobs.Request) (*jobs.View, error)
	// SubmitBatch submits each request on its own (see
	// jobs.Service.SubmitBatch); an error means the store failed.
	SubmitBatch(ctx context.Context, reqs []jobs.Request) ([]jobs.BatchResult, error)
	// OnFinal registers fn to receive each job that becomes final and
	// that wants reports true for (see jobs.Service.OnFinal).
	OnFinal(wants func(id string) bool, fn func(*jobs.View))
}

var _ Submitter = (*jobs.Service)(nil)

// Message types the channels send.
const (
	typeAccepted = "accepted"
	typeError    = "error"
	typeResult   = "result"
)

// resultMessage is pushed when a job submitted on a channel is final.
type resultMessage struct {
	Type string     `json:"type"`
	Job  *jobs.View `json:"job"`
}

// parse decodes one submission. where names the channel in the refusal of
// "wait" ("on a WebSocket").
func parse(data []byte, where string) (jobs.Request, error) {
	req, err := jobs.ParseRequest(data)
	if err != nil {
		return jobs.Request{}, err
	}
	if req.Wait != nil && *req.Wait > 0 {
		return jobs.Request{}, task.Invalid("wait", "not allowed %s: the result is sent when the job is final", where)
	}
	return req, nil
}

// clientError returns what a client is told about a refused submission,
// as the HTTP API tells it: a validation error's message and field, or an
// invalid or conflicting submission's message. ok is false when the
// failure is the server's (the store), which the client is not told.
func clientError(err error) (msg, field string, ok bool) {
	var ve *task.ValidationError
	var re *refusedError
	switch {
	case errors.As(err, &ve):
		return ve.Error(), ve.Field, true
	case errors.As(err, &re):
		return re.msg, "", true
	case errors.Is(err, task.ErrConflict) && task.CodeOf(err) == task.CodeAlreadyExists:
		return err.Error(), "key", true // the key is held by a job a different request made
	case errors.Is(err, task.ErrInvalid), errors.Is(err, task.ErrConflict):
		return err.Error(), "", true
	}
	return "", "", false
}

// refusedError is a channel's own refusal (not the service's), told to
// the client as it is.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// internalMsg is all a client learns about a server failure; the log has
// the cause (as in the HTTP API).
const internalMsg = "internal error"

// recentFinals remembers the last few final jobs that no channel claimed,
// each stamped with its announcement's sequence number. It closes the
// window between Submit returning a pending job and the channel routing
// its result: a job that became final in between is found here. It also
// counts the submissions in that window, so that a channel wants every
// final job while one is open and only its routed ones otherwise (see
// jobs.Service.OnFinal). Callers hold their own lock.
type recentFinals struct {
	seq   uint64 // announcements so far
	open  int    // submissions between begin and end
	max   int
	order *list.List // ids, oldest first
	byID  map[string]recentFinal
}

type recentFinal struct {
	seq  uint64
	view *jobs.View
	elem *list.Element
}

func newRecentFinals(max int) recentFinals {
	return recentFinals{max: max, order: list.New(), byID: map[string]recentFinal{}}
}

// announce counts one announcement; call it for every final job.
func (r *recentFinals) announce() { r.seq++ }

// begin opens a submission's window and returns its mark, the current
// sequence number: a final job found by take with a later stamp became
// final after begin was called. Call it before Submit, and end once the
// job is routed (or the submission failed).
func (r *recentFinals) begin() uint64 {
	r.open++
	return r.seq
}

// end closes a window begin opened.
func (r *recentFinals) end() { r.open-- }

// window is begin under mu (the caller's lock over r), returning the mark
// and the end to defer, also under mu.
func (r *recentFinals) window(mu *sync.Mutex) (mark uint64, end func()) {
	mu.Lock()
	defer mu.Unlock()
	return r.begin(), func() {
		mu.Lock()
		defer mu.Unlock()
		r.end()
	}
}

// submitting reports whether a submission's window is open: any job that
// becomes final then may be the one being submitted.
func (r *recentFinals) submitting() bool { return r.open > 0 }

// keep remembers v, unclaimed, stamped with the current sequence number.
func (r *recentFinals) keep(v *jobs.View) {
	if old, ok := r.byID[v.ID]; ok {
		r.order.Remove(old.elem)
	}
	r.byID[v.ID] = recentFinal{seq: r.seq, view: v, elem: r.order.PushBack(v.ID)}
	for r.order.Len() > r.max {
		id := r.order.Remove(r.order.Front()).(string)
		delete(r.byID, id)
	}
}

// take returns and forgets job id if it became final after mark.
func (r *recentFinals) take(id string, mark uint64) *jobs.View {
	f, ok := r.byID[id]
	if !ok || f.seq <= mark {
		return nil
	}
	r.order.Remove(f.elem)
	delete(r.byID, id)
	return f.view
}

// boundedSet is a set of ids that forgets the oldest past max.
type boundedSet struct {
	max   int
	order *list.List
	byID  map[string]*list.Element
}

func newBoundedSet(max int) *boundedSet {
	return &boundedSet{max: max, order: list.New(), byID: map[string]*list.Element{}}
}

// add adds id and returns the id it forgot to make room, if any.
func (s *boundedSet) add(id string) (evicted string) {
	if _, ok := s.byID[id]; ok {
		return ""
	}
	s.byID[id] = s.order.PushBack(id)
	if s.order.Len() > s.max {
		evicted = s.order.Remove(s.order.Front()).(string)
		delete(s.byID, evicted)
	}
	return evicted
}

// has reports whether id is in the set.
func (s *boundedSet) has(id string) bool {
	_, ok := s.byID[id]
	return ok
}

// remove removes id and reports whether it was there.
func (s *boundedSet) remove(id string) bool {
	e, ok := s.byID[id]
	if ok {
		s.order.Remove(e)
		delete(s.byID, id)
	}
	return ok
}
