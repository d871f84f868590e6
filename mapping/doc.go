// Package mapping turns a scenario's rows into canonical tasks: each scenario
// maps its own field names onto task fields, with defaults and cron_para
// aliases, and validates what users typed. Pure functions, no I/O.
//
// It imports only task and mapping/schedule (never executors, store or
// anything above them).
//
// API:
//
//	type Config struct {            // one scenario, as in config.yaml
//		Name       string            `yaml:"name"`
//		Collection string            `yaml:"collection"` // default Name
//		TZ         string            `yaml:"tz"`         // default zone, "" = UTC
//		IDField    string            `yaml:"id_field"`   // row field holding task_id
//		Fields     map[string]string `yaml:"fields"`     // canonical name -> row field
//		Defaults   map[string]any    `yaml:"defaults"`   // row field -> default value
//		Aliases    map[string]string `yaml:"aliases"`    // text -> schedule text
//		Misfire    string            `yaml:"misfire"`    // "" = once
//	}
//	func MemosConfig() Config                      // the shipped "memos" scenario
//	func CanonicalFields() []string                // the keys of Config.Fields
//	func ReservedFieldNames() []string             // bookkeeping names no field may use
//	func New(cfg Config) (*Scenario, error)         // validates the config
//	func (s *Scenario) Name() string
//	func (s *Scenario) Collection() string
//	func (s *Scenario) IDField() string
//	func (s *Scenario) Field(canonical string) string // row field of a canonical one
//	func (s *Scenario) Location() *time.Location    // the default zone
//	func (s *Scenario) Config() Config              // the validated config
//	// ValidateFields checks user input before it is stored (names, types,
//	// sizes, field count); errors are *task.ValidationError naming the row field.
//	func (s *Scenario) ValidateFields(fields map[string]any) error
//	// AssignID returns the row's task id, generating and setting one when empty.
//	func (s *Scenario) AssignID(fields map[string]any) (string, error)
//	// ToTask maps a stored row to its task (IsEnable from the row's active
//	// field, Anchor = now). Errors are *task.ValidationError naming the row
//	// field, e.g. when: "dayly 8:00": unknown word "dayly" at 1; expected ...
//	func (s *Scenario) ToTask(row *task.Row, now time.Time) (*task.Task, error)
//	// ParseSchedule parses a schedule text as ToTask does (aliases, zone), for previews.
//	func (s *Scenario) ParseSchedule(text, tz string) (*schedule.Schedule, error)
//	// Schedule parses a task's canonical CronPara in its zone.
//	func Schedule(t *task.Task) (*schedule.Schedule, error)
//
// Split of work: ValidateFields checks shape when a row is saved, so a row
// that is well-formed but wrong (a typo in the schedule, an unknown channel)
// is still stored; ToTask checks meaning when the sync patrol reads it, and
// its error goes to the row's error field.
package mapping
