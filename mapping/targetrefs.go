package mapping

// TargetRef is a target id a row names, with the row field naming it.
type TargetRef struct {
	Field string
	ID    string
}

// TargetRefs returns the target ids fields name in the scenario's targets
// and alert fields (the scenario's defaults apply), each with its row
// field, targets first, in the order written. A value that does not read
// as target ids is left out: ToTask reports it.
func (s *Scenario) TargetRefs(fields map[string]any) []TargetRef {
	m := &mapper{s: s, fields: fields}
	var out []TargetRef
	for _, canon := range []string{FieldTargets, FieldAlert} {
		v := m.get(canon)
		if v == nil {
			continue
		}
		ids, err := readTargets(v)
		if err != nil {
			continue
		}
		for _, id := range ids {
			out = append(out, TargetRef{Field: s.rowField(canon), ID: id})
		}
	}
	return out
}
