package docsapi

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestJSONHasNoNull converts the document and looks for null values: the
// document never means one, and YAML makes one silently from a comma
// inside an unquoted flow-style value ({summary: a, b} has key "b").
func TestJSONHasNoNull(t *testing.T) {
	raw, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case nil:
			t.Errorf("null at %s: quote the value that holds a comma", path)
		case map[string]any:
			for k, e := range v {
				walk(path+"/"+k, e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s/%d", path, i), e)
			}
		}
	}
	walk("", doc)
}
