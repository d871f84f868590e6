package mongo

import (
	"encoding/json"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// plainFields returns row fields as the SQLite driver returns them, which
// decodes its JSON with UseNumber: numbers as json.Number, sub-documents as
// map[string]any and arrays as []any, whatever BSON type the server kept
// (int32, int64, double, bson.M, bson.A). Callers then see one set of types
// on either driver (the API's type switches, export's JSON).
func plainFields(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = plainValue(v)
	}
	return out
}

// plainValue is plainFields for one value.
func plainValue(v any) any {
	switch x := v.(type) {
	case int32:
		return json.Number(strconv.FormatInt(int64(x), 10))
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case int:
		return json.Number(strconv.Itoa(x))
	case float64:
		b, err := json.Marshal(x)
		if err != nil { // NaN or ±Inf, which JSON cannot hold
			return x
		}
		return json.Number(b)
	case bson.M:
		return plainFields(x)
	case map[string]any:
		return plainFields(x)
	case bson.A:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainValue(e)
		}
		return out
	}
	return v
}
