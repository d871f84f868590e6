package webtable

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// tableCounts counts the scenario's rows each filter chip keeps (without
// the search): invalid, switched off, failing (store.RowStateFailing),
// due within the hour, and by channel.
type tableCounts struct {
	Errors   int64            `json:"errors"`
	Off      int64            `json:"off"`
	Failing  int64            `json:"failing"`
	Due      int64            `json:"due"`
	Channels map[string]int64 `json:"channels"`
}

// dueWithin is how far ahead the "due" filter looks.
const dueWithin = time.Hour

// channelFilter keeps the rows of one channel; the scenario's default
// channel (else the built-in outbox) also keeps the rows that name none.
func (t *Table) channelFilter(scenario string, col Column, ch string) store.RowFilter {
	def := string(task.ChannelOutbox)
	if sc := t.scenarios[scenario]; sc != nil {
		if v, ok := sc.Config().Defaults[col.Field].(string); ok && v != "" {
			def = v
		}
	}
	return store.RowFilter{Field: col.Field, Value: ch, OrMissing: ch == def}
}

// filterOf reads the filter chips of a table request: filter[state]
// (error, off, failing or due: due within the hour) and filter[channel].
func (t *Table) filterOf(scenario string, cols []Column, form url.Values, now time.Time) (store.RowFilter, error) {
	var f store.RowFilter
	switch st := form.Get("filter[state]"); st {
	case "":
	case store.RowStateError, store.RowStateOff, store.RowStateFailing:
		f.State = st
	case "due":
		f.DueBy = now.Add(dueWithin)
	default:
		return f, fmt.Errorf("filter[state]: must be error, off, failing or due, got %q", task.Truncate(st, 16))
	}
	if ch := form.Get("filter[channel]"); ch != "" {
		col, ok := channelColumn(cols)
		if !ok || !slices.Contains(col.Options, ch) {
			return f, fmt.Errorf("filter[channel]: %q is not a channel of this table", task.Truncate(ch, 16))
		}
		cf := t.channelFilter(scenario, col, ch)
		f.Field, f.Value, f.OrMissing = cf.Field, cf.Value, cf.OrMissing
	}
	return f, nil
}

// counts counts what each filter chip keeps: one count query each, served
// by the store's indexes.
func (t *Table) counts(ctx context.Context, scenario string, cols []Column, now time.Time) (*tableCounts, error) {
	n := func(f store.RowFilter) (int64, error) {
		p, err := t.store.QueryRows(ctx, store.RowQuery{Scenario: scenario, Limit: 1, Filter: f})
		if err != nil {
			return 0, err
		}
		return p.Filtered, nil
	}
	out := &tableCounts{Channels: map[string]int64{}}
	var err error
	if out.Errors, err = n(store.RowFilter{State: store.RowStateError}); err != nil {
		return nil, err
	}
	if out.Off, err = n(store.RowFilter{State: store.RowStateOff}); err != nil {
		return nil, err
	}
	if out.Failing, err = n(store.RowFilter{State: store.RowStateFailing}); err != nil {
		return nil, err
	}
	if out.Due, err = n(store.RowFilter{DueBy: now.Add(dueWithin)}); err != nil {
		return nil, err
	}
	if col, ok := channelColumn(cols); ok {
		for _, ch := range col.Options {
			if out.Channels[ch], err = n(t.channelFilter(scenario, col, ch)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// countTries is how many times pageWithCounts reads the counts before it
// answers with counts that a change of the page's rows may have raced.
const countTries = 3

// pageWithCounts reads the chips' counts so that one answer never
// contradicts itself: page was read before them, and the page is read
// again after them; when none of its rows changed what a chip counts them
// by (chipsOf) in between, the counts saw the same rows the page shows.
// Otherwise (a run ended, an edit landed, between the reads: on the mongo
// driver a run's end reaches its row in a later write than the run's own)
// both are read again, up to countTries times; the last reads answer
// then, and the next poll shows them settled.
func (t *Table) pageWithCounts(ctx context.Context, q store.RowQuery, page *store.RowPage, cols []Column,
	now time.Time) (*store.RowPage, *tableCounts, error) {
	for try := 1; ; try++ {
		counts, err := t.counts(ctx, q.Scenario, cols, now)
		if err != nil {
			return nil, nil, err
		}
		again, err := t.store.QueryRows(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		if slices.Equal(chipsOf(page), chipsOf(again)) || try == countTries {
			return again, counts, nil
		}
		page = again
	}
}

// chipInput is what the chips count a row by: its validity and switch
// (is_active), its last status (failing), its next fire (due) and its
// version (its fields, the channel among them).
type chipInput struct {
	id         string
	version    int64
	isActive   int
	lastStatus string
	nextFire   int64 // Unix ms: comparable with ==
}

// chipsOf lists the chip inputs of page's rows, in page order.
func chipsOf(page *store.RowPage) []chipInput {
	out := make([]chipInput, len(page.Rows))
	for i, r := range page.Rows {
		out[i] = chipInput{id: r.ID, version: r.Version, isActive: r.IsActive, lastStatus: r.LastStatus, nextFire: r.NextFire.UnixMilli()}
	}
	return out
}
