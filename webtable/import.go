package webtable

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// Bounds on a CSV import.
const (
	maxImportBytes  = 4 << 20
	maxImportLines  = 10_000 // data lines, after the header
	maxImportErrors = 1000   // line errors reported; the rest are counted
)

// lineError is one refused line of an import. Line counts from 1, the
// header; a quoted value spanning lines is reported at its record's first
// line.
type lineError struct {
	Line  int    `json:"line"`
	Field string `json:"field,omitempty"`
	Error string `json:"error"`
}

// importRefused is the answer of an import that wrote nothing.
type importRefused struct {
	Error string      `json:"error"`
	Code  task.Code   `json:"code"`
	Lines []lineError `json:"lines"`
}

// importDone is the answer of an import that stored every line.
type importDone struct {
	// Imported counts the rows this request inserted; AlreadyImported the
	// file's rows found stored as the file has them (an earlier run of the
	// same import, cut short, stored them).
	Imported        int `json:"imported"`
	AlreadyImported int `json:"already_imported"`
	// ImportID names the import: a hash of the scenario and the file. The
	// same file gets the same id, and its lines without an id the same
	// row ids (mapping.Scenario.AssignIDFor), so a re-run finishes the job.
	ImportID string `json:"import_id"`
	// IDs are the row ids of every line, in file order.
	IDs []string `json:"ids"`
}

// importConflict refuses an import whose ids are stored with other
// fields (409): refused is the answer.
type importConflict struct {
	refused importRefused
}

func (e *importConflict) Error() string { return e.refused.Error }

// importRow is one parsed data line.
type importRow struct {
	line int
	row  *task.Row
}

// importCSV handles POST /api/v1/scenarios/:scenario/import: a CSV file
// (at most 4 MiB and 10,000 data lines) whose header names the row fields.
// Every line is checked first (field names and types, the id, and the
// mapping to a task, so a schedule typo is caught); when any line is bad, or
// an id already exists with other fields, nothing is written and the answer
// lists the lines' errors (400, or 409 for existing ids, with their exact
// count). Otherwise every row not yet stored is inserted and the answer is
// 201 (200 when all were stored already) with the counts. Empty cells are
// left out of the row, so the scenario's defaults apply; a cell "=" + a
// JSON number, true/false, null or quoted text holds that value (csvValue),
// any other cell is text. A file the table export wrote imports as the
// same rows: its status columns are read over and its formula guard (a
// leading apostrophe, see csvSafe) is taken off.
//
// An import is idempotent rather than one transaction (the mongo driver
// has no multi-document transaction on FerretDB): lines without an id get
// ids derived from the file's hash and their line, and a row that is
// already stored with exactly the line's fields counts as imported. An
// import cut short (a crash, a kill) leaves the rows it stored, and
// posting the same file again stores the rest.
func (a *API) importCSV(c *gin.Context) {
	sc, err := a.scenario(c.Param("scenario"))
	if err != nil {
		a.WriteError(c, err)
		return
	}
	data, err := readImportBody(c)
	if err != nil {
		a.WriteError(c, err)
		return
	}
	importID := importIDOf(sc.Name(), data)
	rows, lines, status, msg := a.parseImportAs(sc, data, importID)
	if msg != "" {
		code := task.StatusCode(status)
		if len(lines) > 0 && status == http.StatusBadRequest {
			code = task.CodeInvalidField
		}
		c.AbortWithStatusJSON(status, importRefused{Error: msg, Code: code, Lines: lines})
		return
	}
	ctx := c.Request.Context()
	targets := a.newTargetCheck()
	defer targets.release(ctx)
	if refused, err := a.importTargetErrors(ctx, sc, rows, targets); err != nil || refused != nil {
		if err != nil {
			a.WriteError(c, err)
		} else {
			c.AbortWithStatusJSON(http.StatusBadRequest, refused)
		}
		return
	}
	done := importDone{ImportID: importID, IDs: make([]string, 0, len(rows))}
	todo, err := a.importTodo(ctx, sc, rows, &done)
	var inserted []importRow
	if err == nil {
		inserted, err = a.insertImport(ctx, sc, todo, &done)
	}
	var conflict *importConflict
	if errors.As(err, &conflict) {
		c.AbortWithStatusJSON(http.StatusConflict, conflict.refused)
		return
	}
	if err != nil {
		a.WriteError(c, err)
		return
	}
	user := httpapi.Who(c)
	for _, r := range inserted {
		a.record(ctx, user, sc.Name(), r.row.ID, store.AuditImport, nil, r.row.Fields)
	}
	done.Imported = len(inserted)
	status = http.StatusCreated
	if done.Imported == 0 {
		status = http.StatusOK
	}
	if done.Imported > 0 {
		a.wake()
	}
	c.JSON(status, done)
}

// readImportBody reads an import's file, at most maxImportBytes, without
// its byte order mark.
func readImportBody(c *gin.Context) ([]byte, error) {
	if err := httpapi.LimitBody(c, maxImportBytes); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, httpapi.TooLarge(maxImportBytes)
		}
		return nil, httpapi.Err(http.StatusBadRequest, "body", "cannot read the body: %v", err)
	}
	return bytes.TrimPrefix(data, []byte("\uFEFF")), nil
}

// importTodo returns the parsed rows not yet stored, recording every id in
// done and counting there the rows stored as the file has them. Every id
// must be new, or stored as this file has it: when any is stored with
// other fields, it returns an *importConflict listing them, before
// anything is written.
func (a *API) importTodo(ctx context.Context, sc *mapping.Scenario, rows []importRow, done *importDone) ([]importRow, error) {
	var (
		todo     []importRow
		lines    []lineError
		existing int
	)
	for _, r := range rows {
		done.IDs = append(done.IDs, r.row.ID)
		stored, err := a.store.GetRow(ctx, sc.Name(), r.row.ID)
		switch {
		case errors.Is(err, task.ErrNotFound):
			todo = append(todo, r)
		case err != nil:
			return nil, err
		case sameFields(stored.Fields, r.row.Fields):
			done.AlreadyImported++
		default:
			existing++
			lines = appendLineError(lines, lineError{Line: r.line, Field: sc.IDField(),
				Error: fmt.Sprintf("row %q already exists in scenario %q with other fields", r.row.ID, sc.Name())})
		}
	}
	if existing > 0 {
		msg := fmt.Sprintf("%d rows already exist with other fields; nothing was imported", existing)
		if existing > len(lines) {
			msg += fmt.Sprintf(" (the first %d are listed)", len(lines))
		}
		return nil, &importConflict{importRefused{Error: msg, Code: task.CodeAlreadyExists, Lines: lines}}
	}
	return todo, nil
}

// insertImport inserts the rows of todo and returns those it inserted. A
// row stored meanwhile with the same fields (a concurrent run of this
// import) counts in done as already imported; one stored by someone else
// refuses the import (an *importConflict), and any other failure is
// returned: either way the rows this request inserted are deleted again.
func (a *API) insertImport(ctx context.Context, sc *mapping.Scenario, todo []importRow, done *importDone) ([]importRow, error) {
	var inserted []importRow
	for _, r := range todo {
		err := a.store.InsertRow(ctx, r.row)
		if errors.Is(err, task.ErrConflict) {
			if stored, gerr := a.store.GetRow(ctx, sc.Name(), r.row.ID); gerr == nil && sameFields(stored.Fields, r.row.Fields) {
				done.AlreadyImported++
				continue
			}
		}
		if err != nil {
			a.undoImport(ctx, sc.Name(), inserted)
			if errors.Is(err, task.ErrConflict) {
				return nil, &importConflict{importRefused{Code: task.CodeAlreadyExists,
					Error: fmt.Sprintf("row %q was created by someone else during the import; nothing was imported", r.row.ID),
					Lines: []lineError{{Line: r.line, Field: sc.IDField(), Error: "already exists"}}}}
			}
			return nil, err
		}
		inserted = append(inserted, r)
	}
	return inserted, nil
}

// undoImport deletes the rows this request inserted, so a refused import
// leaves no part of its batch (rows an earlier run stored stay).
func (a *API) undoImport(ctx context.Context, scenario string, inserted []importRow) {
	for _, prev := range inserted {
		if err := a.store.DeleteRow(ctx, scenario, prev.row.ID); err != nil && !errors.Is(err, task.ErrNotFound) {
			a.Logger().ErrorContext(ctx, "import: undoing a partial batch failed", "scenario", scenario,
				"row", prev.row.ID, "error", err)
		}
	}
}

// importIDOf names an import by its scenario and file: 16 hex digits of
// their SHA-256.
func importIDOf(scenario string, data []byte) string {
	h := sha256.New()
	h.Write([]byte(scenario))
	h.Write([]byte{0})
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// sameFields reports whether a stored row's fields are the line's: equal
// as JSON (a store returns the text it was given).
func sameFields(stored, line map[string]any) bool {
	a, err1 := json.Marshal(stored)
	b, err2 := json.Marshal(line)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// parseImport reads and checks a CSV file. On failure it returns the status
// and message of the refusal, with the line errors.
func (a *API) parseImport(sc *mapping.Scenario, data []byte) ([]importRow, []lineError, int, string) {
	return a.parseImportAs(sc, data, importIDOf(sc.Name(), data))
}

// parseImportAs is parseImport for the import importID: a line without an
// id gets the one derived from importID and the line.
func (a *API) parseImportAs(sc *mapping.Scenario, data []byte, importID string) ([]importRow, []lineError, int, string) {
	if !utf8.Valid(data) {
		// Most often a spreadsheet saved in a legacy encoding (GBK, Latin-1).
		line := 1 + bytes.Count(data[:invalidUTF8At(data)], []byte("\n"))
		return nil, []lineError{{Line: line, Error: "not UTF-8 text; save the file as \"CSV UTF-8\""}},
			http.StatusBadRequest, "the file is not UTF-8"
	}
	rd := csv.NewReader(bytes.NewReader(data))
	rd.FieldsPerRecord = 0 // every line has the header's number of cells
	header, lines, msg := readImportHeader(rd, sc)
	if msg != "" {
		return nil, lines, http.StatusBadRequest, msg
	}
	rows, lines, failed, tooMany := readImportLines(rd, sc, data, header, a.Now(), importID)
	switch {
	case tooMany:
		return nil, nil, http.StatusRequestEntityTooLarge,
			fmt.Sprintf("more than %d lines after the header; split the file", maxImportLines)
	case failed > 0:
		return nil, lines, http.StatusBadRequest,
			fmt.Sprintf("%d of %d lines have errors; nothing was imported (the first: %s)", failed, failed+len(rows),
				task.LineError(lines[0].Line, lines[0].Field, lines[0].Error))
	case len(rows) == 0:
		return nil, []lineError{{Line: 2, Error: "no rows after the header"}}, http.StatusBadRequest, "no rows to import"
	}
	return rows, nil, 0, ""
}

// readImportHeader reads and checks an import's header line: every name a
// row field of sc, named once. It returns the header trimmed, with "" for
// the table export's status columns (read over), or the line errors and
// the message of the refusal.
func readImportHeader(rd *csv.Reader, sc *mapping.Scenario) ([]string, []lineError, string) {
	header, err := rd.Read()
	if errors.Is(err, io.EOF) {
		return nil, []lineError{{Line: 1, Error: "the file is empty; the first line must name the row fields"}}, "empty file"
	}
	if err != nil {
		return nil, []lineError{{Line: 1, Error: csvMessage(err)}}, "bad header line"
	}
	var lines []lineError
	seen := make(map[string]bool, len(header))
	for _, name := range header {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			lines = append(lines, lineError{Line: 1, Error: "a column has no field name"})
		case exportStatusColumn(name) && !seen[name]:
			// A table export's status column: recomputed, read over.
		case name == httpapi.VersionKey:
			lines = append(lines, lineError{Line: 1, Field: name, Error: "is not a row field"})
		case seen[name]:
			lines = append(lines, lineError{Line: 1, Field: name, Error: "field named twice"})
		default:
			if err := sc.ValidateFields(map[string]any{name: nil}); err != nil {
				lines = append(lines, toLineError(1, err))
			}
		}
		seen[name] = true
	}
	if len(lines) > 0 {
		return nil, lines, "bad header line: it must name the row fields"
	}
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
		if exportStatusColumn(header[i]) {
			header[i] = "" // checkImportLine skips it
		}
	}
	return header, nil, ""
}

// readImportLines reads and checks an import's data lines after the
// header: the rows of the good lines, the errors of the bad ones and
// their count. tooMany reports a file of more than maxImportLines lines.
func readImportLines(rd *csv.Reader, sc *mapping.Scenario, data []byte, header []string, now time.Time,
	importID string) (rows []importRow, lines []lineError, failed int, tooMany bool) {
	ids := map[string]int{}
	for {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if len(rows)+failed >= maxImportLines {
			return nil, nil, 0, true
		}
		if err != nil {
			// FieldPos is valid only after a record was read: never call
			// it on a syntax error (it panics when no field was read).
			failed++
			lines = appendLineError(lines, csvLineError(data, header, err))
			if !errors.Is(err, csv.ErrFieldCount) {
				break // the reader cannot find the next line reliably
			}
			continue
		}
		line, _ := rd.FieldPos(0)
		r, lerr := checkImportLine(sc, header, rec, line, now, importID)
		if lerr == nil {
			if first, dup := ids[r.row.ID]; dup {
				lerr = &lineError{Line: line, Field: sc.IDField(),
					Error: fmt.Sprintf("id %q is already used on line %d", r.row.ID, first)}
			}
		}
		if lerr != nil {
			failed++
			lines = appendLineError(lines, *lerr)
			continue
		}
		ids[r.row.ID] = line
		rows = append(rows, r)
	}
	return rows, lines, failed, false
}

// checkImportLine builds one line's row and checks it as createRow and the
// sync patrol would.
func checkImportLine(sc *mapping.Scenario, header, rec []string, line int, now time.Time, importID string) (importRow, *lineError) {
	fields := make(map[string]any, len(header))
	for i, cell := range rec {
		if v, ok := csvValue(cell); ok && header[i] != "" {
			fields[header[i]] = v
		}
	}
	fail := func(err error) (importRow, *lineError) {
		e := toLineError(line, err)
		return importRow{}, &e
	}
	id, err := sc.AssignIDFor(fields, importID+":"+strconv.Itoa(line))
	if err != nil {
		return fail(err)
	}
	if err := sc.ValidateFields(fields); err != nil {
		return fail(err)
	}
	row := &task.Row{Scenario: sc.Name(), ID: id, Fields: fields, IsActive: isActive(sc, fields)}
	if _, err := sc.ToTask(row, now); err != nil {
		return fail(err)
	}
	return importRow{line: line, row: row}, nil
}

// invalidUTF8At returns the offset of data's first byte that is not part
// of valid UTF-8, or len(data).
func invalidUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// appendLineError adds e unless maxImportErrors are listed already.
func appendLineError(lines []lineError, e lineError) []lineError {
	if len(lines) >= maxImportErrors {
		return lines
	}
	return append(lines, e)
}

// toLineError turns a validation error into a line error.
func toLineError(line int, err error) lineError {
	var ve *task.ValidationError
	if errors.As(err, &ve) {
		return lineError{Line: line, Field: ve.Field, Error: ve.Msg} // the field is named apart
	}
	return lineError{Line: line, Error: err.Error()}
}

// exportStatusColumn reports whether name is a status column the table
// export writes (is_active, next_fire, last_fire, last_status, error): the
// service computes those, so an import reads over them, and a file
// exported from a table imports as it is.
func exportStatusColumn(name string) bool {
	switch name {
	case "is_active", "next_fire", "last_fire", "last_status", "error":
		return true
	}
	return false
}

// csvUnguard undoes csvSafe: one leading apostrophe is dropped when what
// follows it would have been guarded (= + - @ tab CR) or is an apostrophe
// itself. A cell written by hand as 'text keeps its apostrophe.
func csvUnguard(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.IndexByte(csvGuarded+"'", s[1]) >= 0 {
		return s[1:]
	}
	return s
}

// csvLineError describes a CSV syntax error of a data line: the line its
// record starts on and, when the reader says where it stopped, the field
// (the header's name of the cell) holding the broken quote.
func csvLineError(data []byte, header []string, err error) lineError {
	e := lineError{Error: csvMessage(err)}
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return e
	}
	e.Line = pe.StartLine
	if i := csvFieldIndex(data, pe); i >= 0 && i < len(header) {
		e.Field = header[i]
	}
	return e
}

// csvFieldIndex returns the index of the cell in which the reader stopped
// with pe: it counts the commas outside quotes from the start of the
// record's first line up to pe's line and (1-based byte) column; -1 when
// the position is not in data.
func csvFieldIndex(data []byte, pe *csv.ParseError) int {
	start, stop := lineOffset(data, pe.StartLine), lineOffset(data, pe.Line)
	if start < 0 || stop < 0 || pe.Column < 1 {
		return -1
	}
	stop = min(stop+pe.Column-1, len(data))
	field, quoted := 0, false
	for _, b := range data[start:stop] {
		switch {
		case b == '"':
			quoted = !quoted
		case b == ',' && !quoted:
			field++
		}
	}
	return field
}

// lineOffset returns the byte offset at which 1-based line n of data
// starts, or -1 when data has fewer lines.
func lineOffset(data []byte, n int) int {
	off := 0
	for ; n > 1; n-- {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return off
}

// csvMessage is a CSV syntax error without the reader's line prefix.
func csvMessage(err error) string {
	switch {
	case errors.Is(err, csv.ErrBareQuote):
		return `CSV: a quote (") inside a cell that does not start with one; put the cell in quotes and double the quote: "say ""hi"""`
	case errors.Is(err, csv.ErrQuote):
		return `CSV: a quoted cell is not closed, or text follows its closing quote; double a quote inside a quoted cell ("")`
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return "CSV: " + pe.Err.Error()
	}
	return "CSV: " + err.Error()
}
