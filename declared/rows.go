package declared

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
)

// columns is what planRows reads of a scenario's column model.
type columns struct {
	IDField   string   `json:"id_field"`
	Scenarios []string `json:"scenarios"`
	// Fields maps canonical task fields to the scenario's row fields.
	Fields map[string]string `json:"fields"`
}

func (c *Client) columns(ctx context.Context, scenario string) (*columns, error) {
	var cols columns
	if err := c.do(ctx, http.MethodGet, "/api/v1/scenarios/"+url.PathEscape(scenario)+"/columns", 0, nil, &cols); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", scenario, err)
	}
	return &cols, nil
}

// planRows plans the declared rows; roles gets each declared scenario's
// row fields by role (targets, alert, …) for checkRefs.
func planRows(ctx context.Context, c *Client, f *File, prune bool, roles map[string]map[string]string) (changes, deletes []Change, err error) {
	idFields := map[string]string{}
	for _, d := range f.Rows {
		if _, ok := idFields[d.Scenario]; ok {
			continue
		}
		cols, err := c.columns(ctx, d.Scenario)
		if err != nil {
			return nil, nil, err
		}
		idFields[d.Scenario] = cols.IDField
		roles[d.Scenario] = map[string]string{}
		for canon, field := range cols.Fields {
			roles[d.Scenario][field] = canon
		}
	}
	declared := map[string]bool{}
	for _, d := range f.Rows {
		declared[d.Scenario+"\x00"+d.ID] = true
		ch, err := planRow(ctx, c, f, d, idFields[d.Scenario])
		if err != nil {
			return nil, nil, err
		}
		changes = append(changes, ch)
	}
	if prune {
		if deletes, err = pruneRows(ctx, c, f.Name, declared); err != nil {
			return nil, nil, err
		}
	}
	return changes, deletes, nil
}

// planRow compares declared row d with the node's.
func planRow(ctx context.Context, c *Client, f *File, d *RowDecl, idField string) (Change, error) {
	want := maps.Clone(d.Fields)
	if v, ok := want[idField]; ok && v != d.ID {
		return Change{}, f.errAt(fieldNode(d.node, idField), "rows."+d.Scenario+"."+d.ID+"."+idField,
			"is the row id field: it is %v but the entry's key is %q; leave it out", v, d.ID)
	}
	want[idField] = d.ID
	for k, v := range want {
		if v == nil {
			delete(want, k) // null: the row has no such field
		}
	}
	want, err := normalize(want)
	if err != nil {
		return Change{}, err
	}
	path := rowsPath(d.Scenario) + "/" + url.PathEscape(d.ID)
	cur, err := c.get(ctx, path)
	if err != nil {
		return Change{}, fmt.Errorf("read row %s/%s: %w", d.Scenario, d.ID, err)
	}
	ch := Change{Kind: KindRow, Scenario: d.Scenario, ID: d.ID}
	if cur == nil {
		ch.Action, ch.method, ch.path, ch.body = Create, http.MethodPost, rowsPath(d.Scenario), want
		return ch, nil
	}
	have, _ := cur["fields"].(map[string]any)
	patch := map[string]any{}
	for _, k := range sortedKeys(want) {
		if hv, ok := have[k]; !ok || !reflect.DeepEqual(hv, want[k]) {
			patch[k] = want[k]
		}
	}
	for k := range have {
		if _, ok := want[k]; !ok {
			patch[k] = nil // a field the file no longer writes
		}
	}
	fields := slices.Sorted(maps.Keys(patch))
	ch.method, ch.path, ch.ifMatch, ch.body = http.MethodPatch, path, versionOf(cur), patch
	return updateOrNot(ch, fields), nil
}

// pruneRows lists the rows of every scenario the node serves and deletes
// those marked with set that the file does not declare.
func pruneRows(ctx context.Context, c *Client, set string, declared map[string]bool) ([]Change, error) {
	cols, err := c.columns(ctx, "memos") // memos is always served; its model lists every scenario
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, sc := range cols.Scenarios {
		rows, err := c.list(ctx, rowsPath(sc), "rows")
		if err != nil {
			return nil, fmt.Errorf("read rows of %s: %w", sc, err)
		}
		for _, r := range rows {
			id, _ := r["id"].(string)
			fields, _ := r["fields"].(map[string]any)
			if fields[MarkerKey] == set && !declared[sc+"\x00"+id] {
				out = append(out, deleteChange(KindRow, sc, id, rowsPath(sc)+"/"+url.PathEscape(id), versionOf(r)))
			}
		}
	}
	return out, nil
}
