package store

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	"cronsheet/task"
)

// SettingsStore keeps the one live settings record of a cluster: host rate
// limits, the callback allow and deny lists and the cc group limits. Every
// node reads it and applies what it holds; the configuration file only
// seeds it (the first node to start on an empty store writes it).
type SettingsStore interface {
	// GetSettings returns the stored settings, or task.ErrNotFound when
	// none were ever stored.
	GetSettings(ctx context.Context) (*Settings, error)
	// PutSettings stores s (its Version, UpdatedAt and UpdatedBy are the
	// store's: Version becomes the stored one plus 1, UpdatedAt now).
	// ifVersion 0 stores s only when no settings are stored yet, else
	// task.ErrConflict; ifVersion > 0 replaces the stored settings only
	// while they are at that version, else task.ErrConflict (none
	// stored: task.ErrNotFound). It returns the settings as stored.
	PutSettings(ctx context.Context, s *Settings, ifVersion int64) (*Settings, error)
}

// Settings is the live settings record (see SettingsStore). The zero
// value limits and refuses nothing beyond the host guard's built-in rules.
type Settings struct {
	// HostRate is the default rate, in calls per second, of every
	// callback host's token bucket; 0 means unlimited.
	HostRate float64 `json:"host_rate"`
	// HostBurst is the default bucket size; 0 means 1 when HostRate is set.
	HostBurst int `json:"host_burst"`
	// Hosts overrides HostRate and HostBurst for single hosts (lower-case
	// names without a port).
	Hosts map[string]HostLimit `json:"hosts"`
	// Allow and Deny are the callback host guard's lists: CIDRs, IPs,
	// host names and domains with a leading dot.
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
	// CCGroups sets the concurrency limit of jobs' cc groups by group
	// name: it takes the place of the limit each job of that group asks.
	CCGroups map[string]int `json:"cc_groups"`

	// Version counts the stored versions, from 1.
	Version int64 `json:"version"`
	// UpdatedAt is when this version was stored.
	UpdatedAt time.Time `json:"updated_at"`
	// UpdatedBy is who stored it ("config" for the seed).
	UpdatedBy string `json:"updated_by"`
}

// HostLimit is one host's token bucket in Settings.
type HostLimit struct {
	// Rate is calls per second; 0 means unlimited.
	Rate float64 `json:"rate"`
	// Burst is the bucket size; 0 means 1 when Rate is set.
	Burst int `json:"burst"`
}

// Bounds of Settings, so that one record stays small.
const (
	MaxSettingsHosts    = 1000
	MaxSettingsEntries  = 1000
	MaxSettingsCCGroups = 1000
	MaxSettingsCCLimit  = 1000
	MaxSettingsRate     = 1e6
	MaxSettingsBurst    = 1e6
)

// Validate checks the numbers and names of s and refuses a guard that
// would refuse every host: the first error is a *task.ValidationError
// naming its field. The entries of Allow and Deny are parsed by the host
// guard itself (the caller's check); here an entry with a "/" must be a
// CIDR and any other must not be empty.
func (s *Settings) Validate() error {
	if err := checkRate("host_rate", s.HostRate, s.HostBurst); err != nil {
		return err
	}
	if len(s.Hosts) > MaxSettingsHosts {
		return task.Invalid("hosts", "at most %d hosts; got %d", MaxSettingsHosts, len(s.Hosts))
	}
	for _, h := range sortedKeys(s.Hosts) {
		if !validHostName(h) {
			return task.Invalid("hosts", "%q is not a host name (letters, digits, '-', '_' and dots, no port)", task.Truncate(h, 100))
		}
		if err := checkRate("hosts."+h, s.Hosts[h].Rate, s.Hosts[h].Burst); err != nil {
			return err
		}
	}
	for field, list := range map[string][]string{"allow": s.Allow, "deny": s.Deny} {
		if err := checkEntries(field, list); err != nil {
			return err
		}
	}
	if len(s.CCGroups) > MaxSettingsCCGroups {
		return task.Invalid("cc_groups", "at most %d groups; got %d", MaxSettingsCCGroups, len(s.CCGroups))
	}
	for _, g := range sortedKeys(s.CCGroups) {
		if strings.TrimSpace(g) == "" || len(g) > 200 {
			return task.Invalid("cc_groups", "a group name must be 1 to 200 characters, not blank")
		}
		if n := s.CCGroups[g]; n < 1 || n > MaxSettingsCCLimit {
			return task.Invalid("cc_groups."+g, "limit must be 1 to %d; got %d", MaxSettingsCCLimit, n)
		}
	}
	return s.checkLockout()
}

// checkRate checks one rate and burst.
func checkRate(field string, rate float64, burst int) error {
	if !(rate >= 0 && rate <= MaxSettingsRate) { // also refuses NaN
		return task.Invalid(field, "rate must be 0 (unlimited) to %g calls per second; got %v", float64(MaxSettingsRate), rate)
	}
	if burst < 0 || burst > MaxSettingsBurst {
		return task.Invalid(field, "burst must be 0 to %d; got %d", int(MaxSettingsBurst), burst)
	}
	return nil
}

// checkEntries checks the size and the CIDRs of an allow or deny list.
func checkEntries(field string, list []string) error {
	if len(list) > MaxSettingsEntries {
		return task.Invalid(field, "at most %d entries; got %d", MaxSettingsEntries, len(list))
	}
	for _, e := range list {
		e = strings.TrimSpace(e)
		if e == "" {
			return task.Invalid(field, "an entry is empty")
		}
		if strings.Contains(e, "/") {
			if _, err := netip.ParsePrefix(e); err != nil {
				return task.Invalid(field, "entry %q is not a CIDR: %v", task.Truncate(e, 100), err)
			}
		}
	}
	return nil
}

// checkLockout refuses an empty allow list with a deny list covering every
// IPv4 and every IPv6 address: every callback host would be refused.
func (s *Settings) checkLockout() error {
	if len(s.Allow) > 0 {
		return nil
	}
	var all4, all6 bool
	for _, e := range s.Deny {
		p, err := netip.ParsePrefix(strings.TrimSpace(e))
		if err != nil || p.Bits() != 0 {
			continue
		}
		all4 = all4 || p.Addr().Is4()
		all6 = all6 || p.Addr().Is6()
	}
	if all4 && all6 {
		return task.Invalid("deny", "with an empty allow list, denying 0.0.0.0/0 and ::/0 means every host would be refused; "+
			"allow the hosts callbacks may reach, or deny less")
	}
	return nil
}

// validHostName reports whether h is a lower-case host name or IP
// without a port.
func validHostName(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if h == "" || len(h) > 253 || h != strings.ToLower(h) {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// sortedKeys returns m's keys in order, so that the first error is stable.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Normalized returns a copy of s with nil lists and maps made empty and
// host names lower-cased, the form drivers store and the API answers.
func (s *Settings) Normalized() *Settings {
	out := *s
	out.Hosts = make(map[string]HostLimit, len(s.Hosts))
	for h, l := range s.Hosts {
		out.Hosts[strings.ToLower(strings.TrimSpace(h))] = l
	}
	out.Allow = trimmed(s.Allow)
	out.Deny = trimmed(s.Deny)
	out.CCGroups = make(map[string]int, len(s.CCGroups))
	for g, n := range s.CCGroups {
		out.CCGroups[g] = n
	}
	return &out
}

func trimmed(list []string) []string {
	out := make([]string, 0, len(list))
	for _, e := range list {
		out = append(out, strings.TrimSpace(e))
	}
	return out
}

// SettingsVersionError is the task.ErrConflict of a PutSettings whose
// ifVersion is not the stored one.
func SettingsVersionError(ifVersion, stored int64) error {
	if ifVersion == 0 {
		return fmt.Errorf("settings are stored already (version %d): %w", stored, task.ErrConflict)
	}
	return fmt.Errorf("settings are at version %d, not %d: %w", stored, ifVersion, task.ErrConflict)
}
