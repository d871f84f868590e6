package task

import "strings"

// InternalParamPrefix starts the names of the params cronsheet passes
// between its own parts (a trigger_task chain's depth): the builtin
// executor reads them, and no other executor is given them.
const InternalParamPrefix = "cronsheet_"

// ExternalParams returns params without the internal ones
// (InternalParamPrefix): params itself when it holds none.
func ExternalParams(params map[string]string) map[string]string {
	n := 0
	for k := range params {
		if strings.HasPrefix(k, InternalParamPrefix) {
			n++
		}
	}
	if n == 0 {
		return params
	}
	out := make(map[string]string, len(params)-n)
	for k, v := range params {
		if !strings.HasPrefix(k, InternalParamPrefix) {
			out[k] = v
		}
	}
	return out
}
