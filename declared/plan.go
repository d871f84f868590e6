package declared

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"cronsheet/task"
)

// Kind is a kind of declared object.
type Kind string

// The kinds a file declares, in the order apply makes them.
const (
	KindTarget Kind = "target"
	KindFlow   Kind = "flow"
	KindRow    Kind = "row"
)

// Action is what apply does to one object.
type Action string

// Actions of a plan.
const (
	Create    Action = "create"
	Update    Action = "update"
	Unchanged Action = "unchanged"
	Delete    Action = "delete"
)

// Change is one line of a plan: an object and what apply does to it.
type Change struct {
	Kind     Kind
	Scenario string // rows only
	ID       string
	Action   Action
	// Fields names the fields an update changes ("secrets" for a
	// target's secret parts); never their values.
	Fields []string

	method  string
	path    string
	ifMatch int64
	body    any
}

// Name names the object: a target or flow id, scenario/id for a row.
func (c Change) Name() string {
	if c.Kind == KindRow {
		return c.Scenario + "/" + c.ID
	}
	return c.ID
}

// String is the plan's line for c: "update target hook (http.url, secrets)".
func (c Change) String() string {
	s := fmt.Sprintf("%s %s %s", c.Action, c.Kind, c.Name())
	if len(c.Fields) > 0 {
		s += " (" + strings.Join(c.Fields, ", ") + ")"
	}
	return s
}

// Plan is what apply does to make a file's objects exist as written:
// creates and updates of targets, flows and rows in that order, then the
// deletes (with prune) in the reverse order.
type Plan struct {
	Changes []Change
}

// Count returns how many changes have action a.
func (p *Plan) Count(a Action) int {
	n := 0
	for _, c := range p.Changes {
		if c.Action == a {
			n++
		}
	}
	return n
}

// Compute reads the node's objects and compares them with f's. With
// prune, objects of the kinds f declares that carry f's marker but are
// not in f are deleted. A declared flow or row naming a target or flow
// that will not exist is a *FileError, before anything is written.
func Compute(ctx context.Context, c *Client, f *File, prune bool) (*Plan, error) {
	p := &Plan{}
	var deletes [][]Change
	if f.HasTargets || len(f.Targets) > 0 {
		changes, dels, err := planTargets(ctx, c, f, prune)
		if err != nil {
			return nil, err
		}
		p.Changes = append(p.Changes, changes...)
		deletes = append(deletes, dels)
	}
	if f.HasFlows || len(f.Flows) > 0 {
		changes, dels, err := planFlows(ctx, c, f, prune)
		if err != nil {
			return nil, err
		}
		p.Changes = append(p.Changes, changes...)
		deletes = append(deletes, dels)
	}
	roles := map[string]map[string]string{}
	if f.HasRows || len(f.Rows) > 0 {
		changes, dels, err := planRows(ctx, c, f, prune, roles)
		if err != nil {
			return nil, err
		}
		p.Changes = append(p.Changes, changes...)
		deletes = append(deletes, dels)
	}
	for i := len(deletes) - 1; i >= 0; i-- {
		p.Changes = append(p.Changes, deletes[i]...)
	}
	if err := checkRefs(ctx, c, f, p, roles); err != nil {
		return nil, err
	}
	return p, nil
}

// Apply makes p's changes in order; report hears each one made. It stops
// at the first refusal, naming the object.
func (p *Plan) Apply(ctx context.Context, c *Client, report func(Change)) error {
	for _, ch := range p.Changes {
		if ch.Action == Unchanged {
			continue
		}
		if err := c.do(ctx, ch.method, ch.path, ch.ifMatch, ch.body, nil); err != nil {
			return fmt.Errorf("%s %s %s: %w", ch.Action, ch.Kind, ch.Name(), err)
		}
		if report != nil {
			report(ch)
		}
	}
	return nil
}

// marked reports whether o carries set's marker in its labels.
func marked(o object, set string) bool {
	labels, _ := o["labels"].(map[string]any)
	return labels[MarkerKey] == set
}

// deleteChange is the delete of an object at path, at the version the
// plan read (If-Match): an object edited since is not deleted, and apply
// stops there naming it.
func deleteChange(k Kind, scenario, id, path string, version int64) Change {
	return Change{Kind: k, Scenario: scenario, ID: id, Action: Delete, method: http.MethodDelete, path: path, ifMatch: version}
}

func planFlows(ctx context.Context, c *Client, f *File, prune bool) (changes, deletes []Change, err error) {
	have, err := byID(c.list(ctx, "/api/v1/flows", "flows"))
	if err != nil {
		return nil, nil, fmt.Errorf("read flows: %w", err)
	}
	for _, d := range f.Flows {
		want := maps.Clone(d.Body)
		want["labels"] = withMarker(want["labels"], f.Name)
		path := "/api/v1/flows/" + url.PathEscape(d.ID)
		cur, ok := have[d.ID]
		delete(have, d.ID)
		switch {
		case !ok:
			changes = append(changes, Change{Kind: KindFlow, ID: d.ID, Action: Create, method: http.MethodPost,
				path: "/api/v1/flows", body: want})
		default:
			fields, err := diffObjects[task.Flow](want, cur, "state")
			if err != nil {
				return nil, nil, fmt.Errorf("flow %s: %w", d.ID, err)
			}
			changes = append(changes, updateOrNot(Change{Kind: KindFlow, ID: d.ID, method: http.MethodPut, path: path,
				ifMatch: versionOf(cur), body: want}, fields))
		}
	}
	if prune {
		for _, id := range sortedKeys(have) {
			if marked(have[id], f.Name) {
				deletes = append(deletes, deleteChange(KindFlow, "", id, "/api/v1/flows/"+url.PathEscape(id), versionOf(have[id])))
			}
		}
	}
	return changes, deletes, nil
}

// updateOrNot is ch as an update of fields, or unchanged when none.
func updateOrNot(ch Change, fields []string) Change {
	if len(fields) == 0 {
		ch.Action, ch.method, ch.body = Unchanged, "", nil
		return ch
	}
	ch.Action, ch.Fields = Update, fields
	return ch
}

// byID indexes a listing by id.
func byID(list []object, err error) (map[string]object, error) {
	if err != nil {
		return nil, err
	}
	m := make(map[string]object, len(list))
	for _, o := range list {
		id, _ := o["id"].(string)
		m[id] = o
	}
	return m, nil
}

// withMarker returns labels (a declared labels value) with set's marker.
func withMarker(labels any, set string) map[string]any {
	out := map[string]any{}
	if m, ok := labels.(map[string]any); ok {
		maps.Copy(out, m)
	}
	out[MarkerKey] = set
	return out
}

// bookkeeping are the fields a read answer has that a body does not
// declare.
var bookkeeping = []string{"version", "created_at", "updated_at"}

// diffObjects names the fields (one level into objects: http.url) in
// which want and have differ, both read as a T would write them (so
// empty fields compare alike); the bookkeeping fields and ignore are left
// out.
func diffObjects[T any](want, have map[string]any, ignore ...string) ([]string, error) {
	w, err := canonical[T](want)
	if err != nil {
		return nil, err
	}
	h, err := canonical[T](have)
	if err != nil {
		return nil, err
	}
	for _, k := range append(bookkeeping, ignore...) {
		delete(w, k)
		delete(h, k)
	}
	return diffMaps(w, h, ""), nil
}

// canonical returns v read into a T and written back as JSON, read as a
// map (numbers as float64).
func canonical[T any](v map[string]any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var t T
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	return normalize(t)
}

// normalize returns v as JSON would read it back (numbers as float64).
func normalize(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = json.Unmarshal(data, &out)
	return out, err
}

// diffMaps names the keys in which w and h differ, going one level into
// objects; a key absent on one side equals a zero value on the other
// (the API leaves empty fields out of its answers).
func diffMaps(w, h map[string]any, prefix string) []string {
	var out []string
	keys := maps.Clone(w)
	maps.Copy(keys, h)
	for _, k := range sortedKeys(keys) {
		wv, hv := w[k], h[k]
		if isZero(wv) && isZero(hv) {
			continue
		}
		wm, wok := wv.(map[string]any)
		hm, hok := hv.(map[string]any)
		if prefix == "" && wok && hok {
			out = append(out, diffMaps(wm, hm, k+".")...)
			continue
		}
		if !reflect.DeepEqual(wv, hv) {
			out = append(out, prefix+k)
		}
	}
	return out
}

// isZero reports whether v is JSON's null, "", 0, false, [] or {}.
func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
