package declared

import (
	"context"
	"fmt"
	"strings"

	"cronsheet/task"
)

// refIndex is what a declared object may name once the plan is applied:
// the node's targets and flows, plus the file's, minus the plan's deletes.
type refIndex struct {
	targets, flows map[string]bool
}

// newRefIndex reads the node's target and flow ids and applies the
// file and the plan to them.
func newRefIndex(ctx context.Context, c *Client, f *File, p *Plan) (*refIndex, error) {
	x := &refIndex{}
	var err error
	if x.targets, err = c.ids(ctx, "/api/v1/targets", "targets"); err != nil {
		return nil, fmt.Errorf("read targets: %w", err)
	}
	if x.flows, err = c.ids(ctx, "/api/v1/flows", "flows"); err != nil {
		return nil, fmt.Errorf("read flows: %w", err)
	}
	for _, d := range f.Targets {
		x.targets[d.ID] = true
	}
	for _, d := range f.Flows {
		x.flows[d.ID] = true
	}
	for _, ch := range p.Changes {
		switch {
		case ch.Action != Delete:
		case ch.Kind == KindTarget:
			delete(x.targets, ch.ID)
		case ch.Kind == KindFlow:
			delete(x.flows, ch.ID)
		}
	}
	return x, nil
}

// ids lists the ids of a collection.
func (c *Client) ids(ctx context.Context, path, key string) (map[string]bool, error) {
	list, err := c.list(ctx, path, key)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(list))
	for _, o := range list {
		id, _ := o["id"].(string)
		out[id] = true
	}
	return out, nil
}

// missing returns the first entry of refs (target ids, or flow:<id>)
// that names nothing, "" when all are there.
func (x *refIndex) missing(refs []string) string {
	for _, r := range refs {
		if flowID, ok := task.FlowOfTarget(r); ok {
			if !x.flows[flowID] {
				return r
			}
			continue
		}
		if !x.targets[r] {
			return r
		}
	}
	return ""
}

// checkRefs refuses, before anything is written, a declared flow step or
// row (its targets and alert fields, found by their role in the
// scenario's column model) naming a target or flow that will not exist
// after the plan: the API would refuse it half-way.
func checkRefs(ctx context.Context, c *Client, f *File, p *Plan, roles map[string]map[string]string) error {
	x, err := newRefIndex(ctx, c, f, p)
	if err != nil {
		return err
	}
	for _, d := range f.Flows {
		steps, _ := d.Body["steps"].([]any)
		for i, s := range steps {
			step, _ := s.(map[string]any)
			if bad := x.missing(refList(step["targets"])); bad != "" {
				field := fmt.Sprintf("steps[%d].targets", i)
				return f.errAt(fieldNode(d.node, field), "flows."+d.ID+"."+field, "names %q, which neither the node nor this file has", bad)
			}
		}
	}
	for _, d := range f.Rows {
		for field, role := range roles[d.Scenario] {
			if role != "targets" && role != "alert" {
				continue
			}
			if bad := x.missing(refList(d.Fields[field])); bad != "" {
				return f.errAt(fieldNode(d.node, field), "rows."+d.Scenario+"."+d.ID+"."+field,
					"names %q, which neither the node nor this file has", bad)
			}
		}
	}
	return nil
}

// refList reads a list of target ids: a YAML list, or text separated by
// commas or spaces (as the rows API reads a targets field).
func refList(v any) []string {
	var parts []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				parts = append(parts, s)
			}
		}
	case string:
		parts = strings.FieldsFunc(x, func(r rune) bool { return r == ',' || r == ' ' || r == '，' })
	}
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
