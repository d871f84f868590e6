// Package mapping turns a scenario's rows into canonical tasks: each scenario
// maps its own field names onto task fields, with defaults and cron_para
// aliases, and validates what users typed. Pure functions, no I/O.
//
// API CONTRACT (filled in by the implementer; keep these signatures):
//
//	type Config struct {            // one scenario, as in config.yaml
//		Name       string            `yaml:"name"`
//		Collection string            `yaml:"collection"`
//		TZ         string            `yaml:"tz"`        // default zone, "" = UTC
//		IDField    string            `yaml:"id_field"`  // row field holding task_id
//		Fields     map[string]string `yaml:"fields"`    // canonical name -> row field
//		Defaults   map[string]any    `yaml:"defaults"`  // row field -> default value
//		Aliases    map[string]string `yaml:"aliases"`   // text -> schedule text
//		Misfire    string            `yaml:"misfire"`
//	}
//	func MemosConfig() Config                      // the shipped "memos" scenario
//	func New(cfg Config) (*Scenario, error)         // validates the config
//	func (s *Scenario) Name() string
//	func (s *Scenario) IDField() string
//	// ValidateFields checks user input before it is stored (types, sizes,
//	// field count); errors are *task.ValidationError naming the row field.
//	func (s *Scenario) ValidateFields(fields map[string]any) error
//	// ToTask maps a stored row to its task (IsEnable from the row's active
//	// field, Anchor = now). Errors are *task.ValidationError naming the row
//	// field, e.g. when: "dayly 8:00": unknown word "dayly" at 1; expected ...
//	func (s *Scenario) ToTask(row *task.Row, now time.Time) (*task.Task, error)
//	// Schedule parses a task's canonical CronPara in its zone.
//	func Schedule(t *task.Task) (*schedule.Schedule, error)
package mapping
