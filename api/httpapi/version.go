package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"cronsheet/task"
)

// VersionKey is the body key that may carry the If-Match version of a
// PATCH of fields; it is never stored.
const VersionKey = "_version"

// IfMatch returns the version a PATCH is based on, from the If-Match header
// or the body's VersionKey (removed from patch); 0 when neither is given.
func IfMatch(header string, patch map[string]any) (int64, error) {
	var fromHeader, fromBody int64
	if header != "" && strings.TrimSpace(header) != "*" {
		v, err := parseVersion(header)
		if err != nil {
			return 0, Err(http.StatusBadRequest, "If-Match", "If-Match: %v", err)
		}
		fromHeader = v
	}
	if raw, ok := patch[VersionKey]; ok {
		delete(patch, VersionKey)
		if raw != nil {
			v, err := parseVersion(fmt.Sprint(raw))
			if err != nil {
				return 0, task.Invalid(VersionKey, "%v", err)
			}
			fromBody = v
		}
	}
	if fromHeader > 0 && fromBody > 0 && fromHeader != fromBody {
		return 0, task.Invalid(VersionKey, "is %d but If-Match says %d", fromBody, fromHeader)
	}
	return max(fromHeader, fromBody), nil
}

// BodyIfMatch returns the version a PUT of a whole object is based on,
// from the If-Match header or the body's `version` (raw); 0 when neither
// is given.
func BodyIfMatch(header string, raw json.RawMessage) (int64, error) {
	patch := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		// A number or a string holding one, as IfMatch takes it.
		patch[VersionKey] = strings.Trim(string(raw), `"`)
	}
	want, err := IfMatch(header, patch)
	var ve *task.ValidationError
	if errors.As(err, &ve) && ve.Field == VersionKey {
		return 0, task.Invalid("version", "%s", ve.Msg)
	}
	return want, err
}

// parseVersion reads a row's or a target's version: 3, "3" or W/"3".
func parseVersion(s string) (int64, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "W/")
	s = strings.TrimSuffix(strings.TrimPrefix(s, `"`), `"`)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 {
		return 0, errors.New("must be a version, a positive integer")
	}
	return v, nil
}

// WriteVersioned answers with body and its version as ETag, for If-Match.
func WriteVersioned(c *gin.Context, status int, version int64, body any) {
	c.Header("ETag", strconv.Quote(strconv.FormatInt(version, 10)))
	c.JSON(status, body)
}
