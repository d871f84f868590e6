package jobs

import (
	"context"
	"time"

	"cronsheet/store"
)

// finalSub is one OnFinal subscriber.
type finalSub struct {
	wants func(id string) bool // nil: every job
	fn    func(*View)
}

// OnFinal registers fn to receive each job that becomes final (done, dead,
// cancelled) through this node: its runs finished here, or it was
// cancelled here. fn runs on a goroutine of the service's and must not
// block for long. Register before the service is used.
//
// wants, when not nil, is asked with the job's id at the moment the job
// becomes final (after its final state is stored), before the job is read
// back: a job no subscriber wants is not read at all, so a subscriber that
// routes the results of a few jobs does not cost a read of every job that
// finishes. wants must be fast and must not call the service.
func (s *Service) OnFinal(wants func(id string) bool, fn func(*View)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finals = append(s.finals, finalSub{wants: wants, fn: fn})
}

// OnEvents registers fn to receive each batch of transitions once it is
// stored (the lifecycle event sink, metrics). fn runs on the recorder's
// goroutine: it must hand the batch over and return. Register before the
// service is used.
func (s *Service) OnEvents(fn func([]store.JobEvent)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stored = append(s.stored, fn)
}

// announce tells the OnFinal subscribers about job id, if it is final.
func (s *Service) announce(id string) {
	s.mu.Lock()
	all := s.finals
	s.mu.Unlock()
	var subs []func(*View)
	for _, sub := range all { // finals is only appended to: all stays as read
		if sub.wants == nil || sub.wants(id) {
			subs = append(subs, sub.fn)
		}
	}
	if len(subs) == 0 {
		return
	}
	s.background(func() {
		ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
		defer cancel()
		v, err := s.Get(ctx, id)
		if err != nil {
			if s.ctx.Err() == nil {
				s.logger.Error("read final job", "job_id", id, "error", err)
			}
			return
		}
		if !v.State.Final() {
			return
		}
		for _, fn := range subs {
			fn(v)
		}
	})
}

// Wait waits until the job is final (done, dead, cancelled) or d passes,
// then returns it: a long poll. A zero d returns at once.
func (s *Service) Wait(ctx context.Context, id string, d time.Duration) (*View, error) {
	return s.waitOrGet(ctx, id, d, true)
}

func (s *Service) waitOrGet(ctx context.Context, id string, d time.Duration, created bool) (*View, error) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	poll := time.NewTicker(200 * time.Millisecond) // runs finished on other nodes
	defer poll.Stop()
	for {
		notify := s.subscribe(id)
		v, err := s.Get(ctx, id)
		if err != nil {
			s.unsubscribe(id, notify)
			return nil, err
		}
		v.Created = created
		// A run its final report ended while its call is in flight here
		// is told final once the call's answer is kept: wait for that.
		if d <= 0 || (v.State.Final() && (v.Run == nil || !s.answering(v.Run.TriggerID))) {
			s.unsubscribe(id, notify)
			return v, nil
		}
		select {
		case <-notify:
		case <-poll.C:
			s.unsubscribe(id, notify)
		case <-deadline.C:
			s.unsubscribe(id, notify)
			return v, nil
		case <-ctx.Done():
			s.unsubscribe(id, notify)
			return v, nil // the caller went away or its deadline passed: the job as it is
		}
	}
}

func (s *Service) subscribe(id string) chan struct{} {
	ch := make(chan struct{})
	s.mu.Lock()
	s.waiters[id] = append(s.waiters[id], ch)
	s.mu.Unlock()
	return ch
}

func (s *Service) unsubscribe(id string, ch chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.waiters[id]
	for i, c := range list {
		if c == ch {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(s.waiters, id)
	} else {
		s.waiters[id] = list
	}
}

// wakeWaiters wakes everyone waiting on job id.
func (s *Service) wakeWaiters(id string) {
	s.mu.Lock()
	list := s.waiters[id]
	delete(s.waiters, id)
	s.mu.Unlock()
	for _, ch := range list {
		close(ch)
	}
}
