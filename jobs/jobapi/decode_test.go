package jobapi

import (
	"errors"
	"reflect"
	"testing"

	"cronsheet/task"
)

// TestParseRequestNumbersAsText: a body that holds a number as a text
// where a number is meant ("3600" for 3600) parses to the same request as
// the body with the numbers, alone and in a batch beside a body without
// texts; a text that holds no number is refused naming its field, and an
// unknown field after such a text is refused naming itself.
func TestParseRequestNumbersAsText(t *testing.T) {
	const numbers = `{"method":"GET","name":"http://example.com/x","delay":3600,"max_retries":0,"ttl":30,"headers":{"A":"1"}}`
	const texts = `{"method":"GET","name":"http://example.com/x","delay":" 3600","max_retries":"0","ttl":"30","headers":{"A":"1"}}`
	want, err := ParseRequest([]byte(numbers))
	if err != nil {
		t.Fatalf("ParseRequest(%s): %v", numbers, err)
	}
	if want.Delay == nil || *want.Delay != 3600 || want.MaxRetries == nil || *want.MaxRetries != 0 || want.TTL == nil || *want.TTL != 30 {
		t.Fatalf("ParseRequest(%s) = %+v", numbers, want)
	}
	got, err := ParseRequest([]byte(texts))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseRequest(%s) = %+v, %v; want %+v", texts, got, err, want)
	}
	batch, err := ParseBatch([]byte(`[` + numbers + `,` + texts + `]`))
	if err != nil || len(batch) != 2 || !reflect.DeepEqual(batch[0], want) || !reflect.DeepEqual(batch[1], want) {
		t.Errorf("ParseBatch of both bodies = %+v, %v; want two of %+v", batch, err, want)
	}
	for body, field := range map[string]string{
		`{"method":"GET","name":"http://example.com/x","ttl":"thirty"}`:       "ttl",
		`{"method":"GET","name":"http://example.com/x","ttl":"30","bogus":1}`: "bogus",
		`{"method":"GET","name":"http://example.com/x","delay":"1"} {"x":1}`:  "body",
		`{"method":"GET","name":"http://example.com/x","max_retries":"1.5"}`:  "max_retries",
	} {
		if _, err := ParseRequest([]byte(body)); fieldOf(err) != field {
			t.Errorf("ParseRequest(%s): %v; want an error of field %s", body, err, field)
		}
	}
}

// fieldOf is the field a *task.ValidationError names, or "" for another
// error or none.
func fieldOf(err error) string {
	var ve *task.ValidationError
	if errors.As(err, &ve) {
		return ve.Field
	}
	return ""
}
