package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi/jsontype"
)

// MaxBodyBytes bounds every JSON request body that ReadJSON and ReadObject
// read.
const MaxBodyBytes = 256 << 10

// LimitBody caps the request body at limit bytes. A body whose declared
// length already passes limit is refused before anything reads it: the
// answer is the 413, and a client that asked `Expect: 100-continue` never
// gets a "100 Continue" inviting it to send what would be refused. An
// empty body becomes http.NoBody.
func LimitBody(c *gin.Context, limit int64) error {
	if c.Request.Body == nil {
		c.Request.Body = http.NoBody
	}
	if c.Request.ContentLength > limit {
		return TooLarge(limit)
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	return nil
}

// TooLarge is the 413 for a body over limit bytes.
func TooLarge(limit int64) error {
	size := fmt.Sprintf("%d bytes", limit)
	switch {
	case limit >= 1<<20 && limit%(1<<20) == 0:
		size = fmt.Sprintf("%d MiB", limit>>20)
	case limit >= 1<<10 && limit%(1<<10) == 0:
		size = fmt.Sprintf("%d KiB", limit>>10)
	}
	return Err(http.StatusRequestEntityTooLarge, "body", "the body is larger than %s; send less", size)
}

// ReadBody reads the whole body, at most limit bytes (413 past it).
func ReadBody(c *gin.Context, limit int64) ([]byte, error) {
	if err := LimitBody(c, limit); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(c.Request.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, TooLarge(limit)
	}
	return b, err
}

// ReadJSON decodes the request body, at most MaxBodyBytes, as one JSON
// object into v (a pointer to a struct), refusing fields v does not name
// and text that breaks the rule of CheckText.
// Where v takes a number, a text holding one ("30") is taken as that
// number (jsontype.NumbersFromText).
// With optional, an empty body is no error and leaves v as it is. Errors
// are 400s naming the field (413 for a body over the limit).
func ReadJSON(c *gin.Context, v any, optional bool) error {
	data, err := ReadBody(c, MaxBodyBytes)
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return err // the 413
	case err != nil:
		return BodyError(err)
	}
	if data, err = CheckText(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(jsontype.NumbersFromText(data, reflect.TypeOf(v))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if optional && errors.Is(err, io.EOF) {
			return nil
		}
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("data after the JSON value")
		}
		return BodyError(err)
	}
	return nil
}

// ReadObject decodes the request body, at most MaxBodyBytes, as one JSON
// object with numbers kept as json.Number.
// The text rule of CheckText holds for every text in it, but that a line
// break is allowed in any value: the object is a row, whose fields the
// scenario names and checks (jsontype.CheckedLines).
func ReadObject(c *gin.Context) (map[string]any, error) {
	data, err := ReadBody(c, MaxBodyBytes)
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return nil, err // the 413
	case err != nil:
		return nil, BodyError(err)
	}
	data, err = jsontype.CheckedLines(data)
	if te := jsontype.AsText(err); te != nil {
		return nil, Err(http.StatusBadRequest, te.Field, "%s", te.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, BodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("data after the JSON value")
		}
		return nil, BodyError(err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, Err(http.StatusBadRequest, "body", "body: must be a JSON object of fields")
	}
	return obj, nil
}

// CheckText returns data, a JSON body, without a leading byte-order mark
// once it passes the text rule of every door (jsontype.Checked: no NUL or
// other control character, line breaks only in free text, no member
// named twice); else a 400 naming the field.
func CheckText(data []byte) ([]byte, error) {
	data, err := jsontype.Checked(data)
	if te := jsontype.AsText(err); te != nil {
		return nil, Err(http.StatusBadRequest, te.Field, "%s", te.Error())
	}
	return data, err
}

// BodyError turns a decoding error into a 413 or a 400.
func BodyError(err error) error {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return TooLarge(tooBig.Limit)
	case errors.Is(err, io.EOF):
		return Err(http.StatusBadRequest, "body", "body: invalid JSON: empty body")
	}
	return Err(http.StatusBadRequest, "body", "body: invalid JSON: %v", err)
}

// decodeError turns an error of json.Decoder.Decode into a 400 that names
// the field: a value of the wrong type, an unknown field, or bad JSON.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return Err(http.StatusBadRequest, "body", "body: must be a JSON object; got %s", jsontype.Got(te.Value))
		}
		return Err(http.StatusBadRequest, te.Field, "%s: %s", te.Field, jsontype.Message(te))
	}
	// encoding/json has no type for it; the message is its API.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if n, uerr := strconv.Unquote(name); uerr == nil {
			name = n
		}
		return Err(http.StatusBadRequest, name, "%s: unknown field", name)
	}
	return BodyError(err)
}
