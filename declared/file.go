package declared

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"cronsheet/mapping"
)

// MarkerKey is the row field and the label that name the set an object
// belongs to.
const MarkerKey = "managed_by"

// SecretsLabel is the target label holding the hash of the secrets the
// file last set.
const SecretsLabel = "declared_secrets"

// File is a parsed declaration file.
type File struct {
	Path string
	// Name is the set the file manages (its name key).
	Name string
	// Targets, Flows and Rows are the declared objects, in file order;
	// HasTargets, HasFlows and HasRows say which kinds the file declares
	// (its key is present, even empty): only those are pruned.
	Targets    []*TargetDecl
	Flows      []*FlowDecl
	Rows       []*RowDecl
	HasTargets bool
	HasFlows   bool
	HasRows    bool
}

// TargetDecl is one declared target: its JSON body as the targets API
// takes it, and the YAML node it came from (for line numbers).
type TargetDecl struct {
	ID   string
	Body map[string]any
	node *yaml.Node
}

// FlowDecl is one declared flow.
type FlowDecl struct {
	ID   string
	Body map[string]any
	node *yaml.Node
}

// RowDecl is one declared row of a scenario: its fields as the scenario
// names them.
type RowDecl struct {
	Scenario string
	ID       string
	Fields   map[string]any
	node     *yaml.Node
}

// FileError is a problem in the file: where, which field, and why.
type FileError struct {
	Path  string
	Line  int
	Field string
	Msg   string
}

func (e *FileError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s:%d: %s: %s", e.Path, e.Line, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
}

// setNameRe is a set name: it becomes a label value and a row field value.
var setNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// rowIDRe is a row id, as the rows API takes it.
var rowIDRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Load reads and parses the file at path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read declared file: %w", err)
	}
	return Parse(path, data)
}

// Parse parses a declaration file's data; path names it in errors. A
// problem is a *FileError.
func Parse(path string, data []byte) (*File, error) {
	f := &File{Path: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := yamlErrLine(err)
		msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "yaml: "), fmt.Sprintf("line %d: ", line))
		return nil, &FileError{Path: path, Line: line, Msg: msg}
	}
	if len(doc.Content) == 0 {
		return nil, &FileError{Path: path, Line: 1, Msg: "the file is empty; it needs at least name"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, f.errAt(root, "", "must be a mapping with name, targets, flows and rows")
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		var err error
		switch k.Value {
		case "name":
			err = f.parseName(v)
		case "targets":
			f.HasTargets = true
			err = f.parseTargets(v)
		case "flows":
			f.HasFlows = true
			err = f.parseFlows(v)
		case "rows":
			f.HasRows = true
			err = f.parseRows(v)
		default:
			err = f.errAt(k, k.Value, "unknown key; the file takes name, targets, flows and rows")
		}
		if err != nil {
			return nil, err
		}
	}
	if f.Name == "" {
		return nil, f.errAt(root, "name", "required: the set this file manages (it marks every object apply makes)")
	}
	return f, nil
}

func (f *File) errAt(n *yaml.Node, field, format string, args ...any) *FileError {
	return &FileError{Path: f.Path, Line: n.Line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (f *File) parseName(v *yaml.Node) error {
	if v.Kind != yaml.ScalarNode || !setNameRe.MatchString(v.Value) {
		return f.errAt(v, "name", "must be 1 to 63 of letters, digits, '_', '.' and '-', starting with a letter or digit")
	}
	f.Name = v.Value
	return nil
}

// entries checks that v maps ids to mappings and calls fn for each.
func (f *File) entries(v *yaml.Node, what string, fn func(id string, k, body *yaml.Node) error) error {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return f.errAt(v, what, "must map each id to its fields")
	}
	seen := make(map[string]bool, len(v.Content)/2)
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, body := v.Content[i], v.Content[i+1]
		if seen[k.Value] {
			return f.errAt(k, what+"."+k.Value, "is declared twice")
		}
		seen[k.Value] = true
		if body.Kind != yaml.MappingNode {
			return f.errAt(body, what+"."+k.Value, "must be a mapping of fields")
		}
		if err := fn(k.Value, k, body); err != nil {
			return err
		}
	}
	return nil
}

// objectBody converts a target's or flow's node to its API body, with the
// id from its key (an id field, if written, must agree).
func (f *File) objectBody(what, id string, body *yaml.Node) (map[string]any, error) {
	val, err := f.value(body, what+"."+id)
	if err != nil {
		return nil, err
	}
	m := val.(map[string]any)
	if v, ok := m["id"]; ok && v != id {
		return nil, f.errAt(body, what+"."+id+".id", "is %v but the entry's key is %q; leave id out", v, id)
	}
	if _, ok := m["labels"]; ok {
		if lm, ok := m["labels"].(map[string]any); ok {
			for _, k := range []string{MarkerKey, SecretsLabel} {
				if _, taken := lm[k]; taken {
					return nil, f.errAt(fieldNode(body, "labels."+k), what+"."+id+".labels."+k, "is set by apply; leave it out")
				}
			}
		}
	}
	m["id"] = id
	return m, nil
}

func (f *File) parseTargets(v *yaml.Node) error {
	return f.entries(v, "targets", func(id string, k, body *yaml.Node) error {
		m, err := f.objectBody("targets", id, body)
		if err != nil {
			return err
		}
		f.Targets = append(f.Targets, &TargetDecl{ID: id, Body: m, node: body})
		return nil
	})
}

func (f *File) parseFlows(v *yaml.Node) error {
	return f.entries(v, "flows", func(id string, k, body *yaml.Node) error {
		m, err := f.objectBody("flows", id, body)
		if err != nil {
			return err
		}
		f.Flows = append(f.Flows, &FlowDecl{ID: id, Body: m, node: body})
		return nil
	})
}

func (f *File) parseRows(v *yaml.Node) error {
	return f.entries(v, "rows", func(scenario string, _, rows *yaml.Node) error {
		return f.entries(rows, "rows."+scenario, func(id string, k, body *yaml.Node) error {
			return f.parseRow(scenario, id, k, body)
		})
	})
}

func (f *File) parseRow(scenario, id string, k, body *yaml.Node) error {
	where := "rows." + scenario + "." + id
	if !rowIDRe.MatchString(id) {
		return f.errAt(k, where, "a row id is 1 to 64 of letters, digits, '_', '.' and '-'")
	}
	fields := make(map[string]any, len(body.Content)/2)
	for i := 0; i+1 < len(body.Content); i += 2 {
		fk, fv := body.Content[i], body.Content[i+1]
		name := fk.Value
		switch {
		case !mapping.ValidFieldName(name):
			return f.errAt(fk, where+"."+name, "a field name is letters (any script), digits and _, not starting with a digit")
		case name == MarkerKey:
			return f.errAt(fk, where+"."+name, "is set by apply (the file's name); leave it out")
		case fv.Kind != yaml.ScalarNode:
			return f.errAt(fv, where+"."+name, "must be text, a number, true/false or null")
		}
		val, err := f.value(fv, where+"."+name)
		if err != nil {
			return err
		}
		fields[name] = val
	}
	fields[MarkerKey] = f.Name
	f.Rows = append(f.Rows, &RowDecl{Scenario: scenario, ID: id, Fields: fields, node: body})
	return nil
}

// value converts a YAML node to the JSON value it stands for: mappings
// with text keys, sequences, and scalars by their resolved tag (so a time
// such as 2026-12-01 stays text).
func (f *File) value(n *yaml.Node, where string) (any, error) {
	switch n.Kind {
	case yaml.AliasNode:
		return f.value(n.Alias, where)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, f.errAt(k, where, "a key must be text")
			}
			if _, dup := m[k.Value]; dup {
				return nil, f.errAt(k, where+"."+k.Value, "is written twice")
			}
			v, err := f.value(n.Content[i+1], where+"."+k.Value)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			v, err := f.value(c, fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	}
	return f.scalar(n, where)
}

func (f *File) scalar(n *yaml.Node, where string) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		return n.Value == "true" || n.Value == "True" || n.Value == "TRUE", nil
	case "!!int":
		v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil {
			return nil, f.errAt(n, where, "%q is not a whole number this file can hold", n.Value)
		}
		return v, nil
	case "!!float":
		v, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			return nil, f.errAt(n, where, "%q is not a finite number", n.Value)
		}
		return v, nil
	}
	return n.Value, nil
}

// fieldNode finds the node of a dotted path (a.b, steps[2].id) under n,
// as deep as it exists: a problem in a field is reported at its line.
func fieldNode(n *yaml.Node, path string) *yaml.Node {
	for part := range strings.SplitSeq(path, ".") {
		name, idx := part, -1
		if i := strings.IndexByte(part, '['); i >= 0 && strings.HasSuffix(part, "]") {
			name = part[:i]
			idx, _ = strconv.Atoi(part[i+1 : len(part)-1])
		}
		next := child(n, name)
		if next == nil {
			return n
		}
		if idx >= 0 && next.Kind == yaml.SequenceNode && idx < len(next.Content) {
			next = next.Content[idx]
		}
		n = next
	}
	return n
}

func child(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// yamlErrLine reads the line out of a YAML syntax error ("yaml: line 3:
// …"); 1 when it names none.
func yamlErrLine(err error) int {
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		rest := msg[i+5:]
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end > 0 {
			if n, err := strconv.Atoi(rest[:end]); err == nil {
				return n
			}
		}
	}
	return 1
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
