package mapping

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"cronsheet/mapping/schedule"
	"cronsheet/task"
)

// Canonical task fields that a scenario maps its row fields onto (the keys of
// Config.Fields).
const (
	FieldTaskID      = "task_id"      // the task's id; generated when empty
	FieldTitle       = "title"        // params["title"], the subject
	FieldTaskPara    = "task_para"    // the message body
	FieldCronPara    = "cron_para"    // the schedule text or an alias; required
	FieldExecuteType = "execute_type" // once | periodic | until_success
	FieldTaskType    = "task_type"    // the channel: email | sms | outbox
	FieldTo          = "to"           // params["to"], the recipient
	FieldActive      = "active"       // 1/0, true/false, "1"/"0"
	FieldStartTime   = "start_time"   // RFC 3339 or "2006-01-02 15:04[:05]"
	FieldEndTime     = "end_time"     // same forms as start_time
	FieldTTL         = "ttl"          // seconds per attempt, 1..86400
	FieldMaxRetries  = "max_retries"  // 0..100
	FieldTZ          = "tz"           // IANA zone name
	FieldMisfire     = "misfire"      // skip | once | all
	FieldOverlap     = "overlap"      // allow | skip | queue; "" = skip for repeating schedules
	FieldTargets     = "targets"      // target ids, comma-separated; none = the task's own channel
	FieldAlert       = "alert"        // alert target ids, comma-separated; none = no alerts
	FieldAlertTo     = "alert_to"     // recipient of email/SMS alert targets
	FieldAlertAfter  = "alert_after"  // consecutive failed runs before an alert, 1..100
	FieldAlertAbsent = "alert_absent" // alert when a slot has not fired this long after it: seconds or "10m"; 0 = off
	FieldParams      = "params"       // task params filling {{name}} templates: a JSON object or "k=v; k2=v2"
)

// CanonicalFields lists every canonical field in the order ToTask checks them.
func CanonicalFields() []string {
	return []string{
		FieldTaskID, FieldTitle, FieldTaskPara, FieldTZ, FieldCronPara,
		FieldExecuteType, FieldTaskType, FieldTo, FieldActive,
		FieldStartTime, FieldEndTime, FieldTTL, FieldMaxRetries, FieldMisfire,
		FieldOverlap, FieldTargets, FieldAlert, FieldAlertTo, FieldAlertAfter, FieldAlertAbsent,
		FieldParams,
	}
}

// ReservedFieldNames returns the row keys that the system owns (task.Row's
// bookkeeping and identity fields). No user or scenario field may use them,
// in any letter case.
func ReservedFieldNames() []string {
	return []string{
		"_id", "id", "scenario", "fields", "is_fetched", "is_active", "error",
		"next_fire", "last_fire", "last_status", "version", "created_at", "updated_at",
	}
}

func isReserved(name string) bool {
	return slices.Contains(ReservedFieldNames(), strings.ToLower(name))
}

// Name patterns; compiled once, never modified. Names may be written in
// any script: a scenario or collection name is letters without upper case
// (a-z, or letters that have no case, such as Chinese), digits and _,
// starting with a letter; a row field name is letters (any case), marks,
// digits and _, not starting with a digit or a mark. Lengths are checked
// apart (validName), in runes and in bytes.
var (
	scenarioNameRE = regexp.MustCompile(`^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{Lm}\p{Mn}\p{Mc}\p{Nd}_]*$`)
	fieldNameRE    = regexp.MustCompile(`^[\p{L}_][\p{L}\p{Mn}\p{Mc}\p{Nd}_]*$`)
	langRE         = regexp.MustCompile(`^[a-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$`)
)

// Bounds on names.
const (
	maxScenarioRunes   = 32
	maxCollectionRunes = 64
	maxNameBytes       = 128 // a scenario or collection name, in bytes
	// MaxLabel bounds a field's label, in runes.
	MaxLabel = 64
	// MaxLabelLangs bounds the languages of one field's labels.
	MaxLabelLangs = 16
)

// validName reports whether name matches re and has at most maxRunes runes
// and maxBytes bytes, and is valid UTF-8.
func validName(name string, re *regexp.Regexp, maxRunes, maxBytes int) bool {
	return utf8.ValidString(name) && len(name) <= maxBytes && utf8.RuneCountInString(name) <= maxRunes &&
		re.MatchString(name)
}

// ValidFieldName reports whether name may name a row field: 1..64 bytes of
// letters of any script, marks, digits and _, not starting with a digit or
// a mark (标题, due_at, Größe). Reserved names (ReservedFieldNames) pass
// here; ValidateFields refuses them.
func ValidFieldName(name string) bool {
	return validName(name, fieldNameRE, MaxFieldName, MaxFieldName)
}

// MaxAliasLen bounds an alias key and its schedule text, in bytes.
const MaxAliasLen = 256

// Config is one scenario, as written in config.yaml under scenarios.
type Config struct {
	// Name identifies the scenario: 1..32 letters without upper case (a-z,
	// or a script without case such as Chinese: 值班提醒), digits and _,
	// starting with a letter. It appears in URLs, percent-encoded.
	Name string `yaml:"name" json:"name"`
	// Collection holds the scenario's rows; default Name. Same rule as Name,
	// up to 64 runes.
	Collection string `yaml:"collection" json:"collection"`
	// TZ is the default IANA zone of the scenario's rows; "" means UTC.
	TZ string `yaml:"tz" json:"tz"`
	// IDField is the row field holding the task id. It must equal
	// Fields["task_id"] when both are set; either one alone is enough.
	IDField string `yaml:"id_field" json:"id_field"`
	// Fields maps canonical task fields (see CanonicalFields) to row fields.
	// task_id, task_para and cron_para are required; an unmapped optional
	// field takes its built-in default.
	Fields map[string]string `yaml:"fields" json:"fields"`
	// Defaults maps a row field to the value used when a row leaves it empty.
	Defaults map[string]any `yaml:"defaults" json:"defaults"`
	// Aliases maps a text (matched trimmed and case-insensitively) to the
	// schedule text it stands for.
	Aliases map[string]string `yaml:"aliases" json:"aliases"`
	// Misfire is the default misfire policy (skip | once | all); "" = once.
	Misfire string `yaml:"misfire" json:"misfire"`
	// Labels gives mapped row fields and param fields a display label per
	// language: row field -> language tag (en, zh, zh-TW, …) -> label, e.g.
	//	labels: {标题: {en: Title, zh: 标题}}
	// A label is one line of 1..64 runes; at most 16 languages per field.
	// The web table's column model carries them (a column without a label
	// in the page's language shows its own title).
	Labels map[string]map[string]string `yaml:"labels" json:"labels,omitempty"`
	// ParamFields are row fields whose value also becomes a task param
	// under the field's own name, so a target's {{name}} template can use
	// a column of the table directly (param_fields: [day] fills {{day}}).
	// The params field's keys win over them; title and to win over both.
	ParamFields []string `yaml:"param_fields" json:"param_fields,omitempty"`
}

// MemosConfig returns the shipped default scenario "memos": reminders
// delivered by email, SMS or the outbox.
func MemosConfig() Config {
	return Config{
		Name:       "memos",
		Collection: "memos",
		IDField:    "memo_id",
		Fields: map[string]string{
			FieldTaskID:      "memo_id",
			FieldTitle:       "title",
			FieldTaskPara:    "content",
			FieldCronPara:    "when",
			FieldExecuteType: "repeat",
			FieldTaskType:    "channel",
			FieldTo:          "to",
			FieldActive:      "active",
			FieldStartTime:   "start",
			FieldEndTime:     "end",
			FieldTTL:         "timeout",
			FieldMaxRetries:  "retries",
			FieldTZ:          "tz",
			FieldMisfire:     "misfire",
			FieldOverlap:     "overlap",
			FieldTargets:     "targets",
			FieldAlert:       "alert",
			FieldAlertTo:     "alert_to",
			FieldAlertAfter:  "alert_after",
			FieldAlertAbsent: "alert_absent",
			FieldParams:      "params",
		},
		Defaults: map[string]any{
			"channel": string(task.ChannelOutbox),
			"active":  1,
			"timeout": int(task.DefaultTTL / time.Second),
			"retries": task.DefaultRetries,
		},
		Aliases: map[string]string{
			"每天早上8点":   "daily 08:00",
			"每天晚上9点":   "daily 21:00",
			"每小时":      "every 1h",
			"工作日早上9点":  "weekdays 09:00",
			"周末早上10点":  "weekends 10:00",
			"每周一早上9点":  "weekly mon 09:00",
			"每月1号早上9点": "monthly 1 09:00",
			"每月最后一天":   "monthly last 18:00",
			"hourly":   "every 1h",
		},
		Misfire: string(task.MisfireOnce),
	}
}

// Scenario is a validated Config, ready to map rows. It is immutable and
// safe for concurrent use.
type Scenario struct {
	cfg     Config // owned copy; Defaults maps row field -> default
	loc     *time.Location
	fields  map[string]string // canonical -> row field
	byRow   map[string]string // row field -> canonical
	aliases map[string]string // normalized key -> schedule text
	misfire task.Misfire
}

// New validates cfg and returns its Scenario. Errors name the config key,
// e.g. `scenario "memos": fields.to: row field "when" is already mapped to cron_para`.
func New(cfg Config) (*Scenario, error) {
	s, err := build(cfg)
	if err != nil {
		return nil, fmt.Errorf("scenario %q: %w", cfg.Name, err)
	}
	return s, nil
}

func build(cfg Config) (*Scenario, error) {
	if !validName(cfg.Name, scenarioNameRE, maxScenarioRunes, maxNameBytes) {
		return nil, errors.New("name: must be 1..32 letters without upper case (a-z, or letters of a script " +
			"without case such as 值班提醒), digits and _, starting with a letter")
	}
	cfg.Collection = cmp.Or(cfg.Collection, cfg.Name)
	if !validName(cfg.Collection, scenarioNameRE, maxCollectionRunes, maxNameBytes) {
		return nil, fmt.Errorf("collection: %q must be 1..64 letters without upper case, digits and _, starting with a letter",
			truncate(cfg.Collection))
	}
	// Own the maps, so later changes to the caller's config change nothing.
	cfg.Fields, cfg.Defaults, cfg.Aliases = maps.Clone(cfg.Fields), maps.Clone(cfg.Defaults), maps.Clone(cfg.Aliases)
	cfg.Labels = cloneLabels(cfg.Labels)
	cfg.ParamFields = slices.Clone(cfg.ParamFields)
	s := &Scenario{cfg: cfg, misfire: task.MisfireOnce}
	loc, err := loadZone(cfg.TZ)
	if err != nil {
		return nil, fmt.Errorf("tz: %s", err)
	}
	s.loc = loc
	if cfg.Misfire != "" {
		s.misfire = task.Misfire(cfg.Misfire)
		if !s.misfire.Valid() {
			return nil, fmt.Errorf("misfire: %q is not skip, once or all", cfg.Misfire)
		}
	}
	for _, step := range []func() error{s.buildFields, s.buildAliases, s.buildDefaults, s.buildLabels, s.buildParamFields} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Scenario) buildFields() error {
	cfg := s.cfg
	idField := cmp.Or(cfg.IDField, cfg.Fields[FieldTaskID])
	if mapped := cfg.Fields[FieldTaskID]; mapped != "" && mapped != idField {
		return fmt.Errorf("id_field: %q differs from fields.task_id %q", cfg.IDField, mapped)
	}
	s.fields = make(map[string]string, len(cfg.Fields)+1)
	s.byRow = make(map[string]string, len(cfg.Fields)+1)
	keys := sortedKeys(cfg.Fields)
	if cfg.Fields[FieldTaskID] == "" && idField != "" {
		keys = append([]string{FieldTaskID}, keys...)
	}
	for _, canon := range keys {
		row := cfg.Fields[canon]
		if canon == FieldTaskID {
			row = idField
		}
		if !slices.Contains(CanonicalFields(), canon) {
			return fmt.Errorf("fields.%s: unknown canonical field; expected one of %s",
				canon, strings.Join(CanonicalFields(), ", "))
		}
		if err := checkRowFieldName(row); err != nil {
			return fmt.Errorf("fields.%s: %s", canon, err)
		}
		if other, dup := s.byRow[row]; dup {
			return fmt.Errorf("fields.%s: row field %q is already mapped to %s", canon, row, other)
		}
		s.fields[canon] = row
		s.byRow[row] = canon
	}
	for _, canon := range []string{FieldTaskID, FieldTaskPara, FieldCronPara} {
		if s.fields[canon] == "" {
			if canon == FieldTaskID {
				return fmt.Errorf("id_field: is required")
			}
			return fmt.Errorf("fields.%s: is required", canon)
		}
	}
	return nil
}

func checkRowFieldName(name string) error {
	if !ValidFieldName(name) {
		return fmt.Errorf("row field %q must be 1..64 bytes of letters (any script), digits and _, not starting with a digit",
			truncate(name))
	}
	if isReserved(name) {
		return fmt.Errorf("row field %q is reserved for bookkeeping", name)
	}
	return nil
}

func (s *Scenario) buildAliases() error {
	s.aliases = make(map[string]string, len(s.cfg.Aliases))
	for _, key := range sortedKeys(s.cfg.Aliases) {
		text := s.cfg.Aliases[key]
		norm := normalizeAlias(key)
		switch {
		case norm == "":
			return fmt.Errorf("aliases: an alias key is empty")
		case len(norm) > MaxAliasLen || len(text) > MaxAliasLen:
			return fmt.Errorf("aliases.%s: longer than %d bytes", key, MaxAliasLen)
		}
		if _, dup := s.aliases[norm]; dup {
			return fmt.Errorf("aliases.%s: same key as another alias (keys match trimmed, case-insensitively)", key)
		}
		if _, err := schedule.Parse(text, s.cfg.TZ); err != nil {
			return fmt.Errorf("aliases.%s: %w", key, err)
		}
		s.aliases[norm] = text
	}
	return nil
}

// buildDefaults type-checks every default as ToTask would read it.
func (s *Scenario) buildDefaults() error {
	for _, row := range sortedKeys(s.cfg.Defaults) {
		canon, ok := s.byRow[row]
		switch {
		case !ok:
			return fmt.Errorf("defaults.%s: not a mapped row field", row)
		case canon == FieldTaskID:
			return fmt.Errorf("defaults.%s: the id field cannot have a default", row)
		}
		if err := s.checkDefault(canon, s.cfg.Defaults[row]); err != nil {
			return fmt.Errorf("defaults.%s: %w", row, err)
		}
	}
	return nil
}

func (s *Scenario) checkDefault(canon string, v any) error {
	if isEmpty(v) {
		return nil
	}
	var err error
	switch canon {
	case FieldCronPara:
		var text string
		if text, err = textValue(v, maxText); err == nil {
			_, err = s.parseWhen(text, s.loc)
		}
	case FieldExecuteType:
		_, err = readExecuteType(v)
	case FieldTaskType:
		_, err = readChannel(v)
	case FieldActive:
		_, err = flagValue(v)
	case FieldStartTime, FieldEndTime:
		_, err = timeValue(v, s.loc)
	case FieldTTL:
		_, err = readTTL(v)
	case FieldMaxRetries:
		_, err = readRetries(v)
	case FieldTZ:
		_, err = readZone(v)
	case FieldMisfire:
		_, err = readMisfire(v)
	case FieldOverlap:
		_, err = readOverlap(v)
	case FieldTargets, FieldAlert:
		_, err = readTargets(v)
	case FieldAlertAfter:
		_, err = readAlertAfter(v)
	case FieldAlertAbsent:
		_, err = readAlertAbsent(v)
	case FieldTo, FieldTitle:
		_, err = lineValue(v)
	case FieldParams:
		_, err = readParams(v)
	default:
		_, err = textValue(v, maxTextFor(canon))
	}
	return err
}

// buildLabels checks the labels: mapped row fields or param fields,
// language tags, one line of 1..MaxLabel runes each.
func (s *Scenario) buildLabels() error {
	for _, row := range sortedKeys(s.cfg.Labels) {
		if _, ok := s.byRow[row]; !ok && !slices.Contains(s.cfg.ParamFields, row) {
			return fmt.Errorf("labels.%s: not a mapped row field nor a param field", truncate(row))
		}
		byLang := s.cfg.Labels[row]
		if len(byLang) > MaxLabelLangs {
			return fmt.Errorf("labels.%s: %d languages; at most %d", row, len(byLang), MaxLabelLangs)
		}
		for _, lang := range sortedKeys(byLang) {
			label := byLang[lang]
			switch n := utf8.RuneCountInString(label); {
			case !langRE.MatchString(lang):
				return fmt.Errorf("labels.%s.%s: not a language tag like en, zh or zh-TW", row, truncate(lang))
			case !utf8.ValidString(label) || strings.TrimSpace(label) == "":
				return fmt.Errorf("labels.%s.%s: must be text", row, lang)
			case n > MaxLabel:
				return fmt.Errorf("labels.%s.%s: %d characters; at most %d", row, lang, n, MaxLabel)
			case strings.ContainsFunc(label, unicode.IsControl):
				return fmt.Errorf("labels.%s.%s: must be one line without control characters", row, lang)
			}
			byLang[lang] = strings.TrimSpace(label)
		}
	}
	return nil
}

// buildParamFields checks param_fields: valid, distinct row field names,
// neither reserved nor the params or task_para field.
func (s *Scenario) buildParamFields() error {
	if len(s.cfg.ParamFields) > task.MaxParams {
		return fmt.Errorf("param_fields: %d fields; at most %d", len(s.cfg.ParamFields), task.MaxParams)
	}
	for i, f := range s.cfg.ParamFields {
		if err := checkRowFieldName(f); err != nil {
			return fmt.Errorf("param_fields[%d]: %s", i, err)
		}
		switch s.byRow[f] {
		case FieldParams, FieldTaskPara:
			return fmt.Errorf("param_fields[%d]: %q is the %s field", i, f, s.byRow[f])
		}
		if slices.Index(s.cfg.ParamFields, f) != i {
			return fmt.Errorf("param_fields[%d]: %q is named twice", i, f)
		}
	}
	return nil
}

func cloneLabels(in map[string]map[string]string) map[string]map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]map[string]string, len(in))
	for k, v := range in {
		out[k] = maps.Clone(v)
	}
	return out
}

// Labels returns the display labels of a row field by language tag (a
// copy), or nil when the config gives it none.
func (s *Scenario) Labels(field string) map[string]string {
	return maps.Clone(s.cfg.Labels[field])
}

// Config returns a copy of the scenario's validated config, with the
// defaults filled in (Collection, IDField and Fields["task_id"]).
func (s *Scenario) Config() Config {
	cfg := s.cfg
	cfg.IDField = s.fields[FieldTaskID]
	cfg.Fields = maps.Clone(s.fields)
	cfg.Defaults = maps.Clone(s.cfg.Defaults)
	cfg.Aliases = maps.Clone(s.cfg.Aliases)
	cfg.Labels = cloneLabels(s.cfg.Labels)
	cfg.ParamFields = slices.Clone(s.cfg.ParamFields)
	return cfg
}

// Name returns the scenario's name.
func (s *Scenario) Name() string { return s.cfg.Name }

// Collection returns the collection that holds the scenario's rows.
func (s *Scenario) Collection() string { return s.cfg.Collection }

// IDField returns the row field that holds the task id.
func (s *Scenario) IDField() string { return s.fields[FieldTaskID] }

// Field returns the row field mapped to a canonical field (see
// CanonicalFields), or "" when the scenario does not map it.
func (s *Scenario) Field(canonical string) string { return s.fields[canonical] }

// Location returns the scenario's default zone (UTC when its config names none).
func (s *Scenario) Location() *time.Location { return s.loc }

func normalizeAlias(text string) string { return strings.ToLower(strings.TrimSpace(text)) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
