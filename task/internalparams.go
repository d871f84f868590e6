package task

import "strings"

// InternalParamPrefix starts the names of the params cronsheet passes
// between its own parts (a trigger_task chain's depth): the builtin
// executor reads them, and no other executor is given them.
const InternalParamPrefix = "cronsheet_"

// ParamSubject, when set on a run, is its delivery's subject (an email's
// Subject, an SMS's first line) in place of ParamTitle: the flows engine
// sets it on each step run, naming the flow and step beside the title.
const ParamSubject = InternalParamPrefix + "subject"

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
