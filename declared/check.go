package declared

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"cronsheet/task"
)

// Check validates the declared targets and flows as the model does
// (task.Target.Validate, task.Flow.Validate), so a file the API would
// refuse for their shape is refused before anything is read or written.
// What depends on the node's configuration (hosts allowed, exec commands,
// scenarios) is the API's to check. A step naming a target the file
// declares is checked against it (task.CheckStepRecipient); one naming a
// target only the node has is checked by the API at apply. A problem is
// a *FileError.
func (f *File) Check() error {
	targets := map[string]*task.Target{}
	for _, d := range f.Targets {
		var t task.Target
		if err := f.strict(d.Body, &t, d.node, "targets."+d.ID); err != nil {
			return err
		}
		if t.State == "" {
			t.State = task.TargetPreset
		}
		if err := t.Validate(); err != nil {
			return f.validation(err, d.node, "targets."+d.ID)
		}
		targets[d.ID] = &t
	}
	for _, d := range f.Flows {
		var fl task.Flow
		if err := f.strict(d.Body, &fl, d.node, "flows."+d.ID); err != nil {
			return err
		}
		if err := fl.Validate(); err != nil {
			return f.validation(err, d.node, "flows."+d.ID)
		}
		for i, s := range fl.Steps {
			for _, id := range s.Targets {
				if err := task.CheckStepRecipient(i, s, targets[id]); err != nil {
					return f.validation(err, d.node, "flows."+d.ID)
				}
			}
		}
	}
	return nil
}

// serverOnly are the fields of a target or flow that the server sets.
var serverOnly = []string{"version", "created_at", "updated_at", "state"}

// strict decodes body into v refusing unknown fields, and names the field
// at fault.
func (f *File) strict(body map[string]any, v any, n *yaml.Node, where string) error {
	for _, k := range serverOnly {
		if _, ok := body[k]; ok && (k != "state" || strings.HasPrefix(where, "flows.")) {
			return f.errAt(fieldNode(n, k), where+"."+k, "is the server's; leave it out")
		}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return f.errAt(n, where, "%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return f.errAt(fieldNode(n, te.Field), where+"."+te.Field, "must be %s", wordFor(te.Type.Kind().String()))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return f.errAt(fieldNode(n, name), where+"."+name, "unknown field")
	}
	return f.errAt(n, where, "%v", err)
}

// wordFor names a Go kind in plain words.
func wordFor(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "a whole number"
	case kind == "string":
		return "text"
	case kind == "bool":
		return "true or false"
	case kind == "slice":
		return "a list"
	case kind == "map", kind == "struct", kind == "ptr":
		return "a mapping"
	}
	return "of another type"
}

// validation turns a model validation error into a FileError at the
// field's line.
func (f *File) validation(err error, n *yaml.Node, where string) error {
	var ve *task.ValidationError
	if errors.As(err, &ve) {
		return f.errAt(fieldNode(n, ve.Field), where+"."+ve.Field, "%s", ve.Msg)
	}
	return f.errAt(n, where, "%s", fmt.Sprint(err))
}
