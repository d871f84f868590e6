package executors

import (
	"fmt"
	"net/netip"
	"strings"

	"cronsheet/task"
)

// HostGuard decides which hosts HTTP callbacks may reach, so a target cannot
// aim cronsheet at its own machine, the private network or a cloud metadata
// endpoint. Rules apply to the URL's host name and to every IP address
// actually dialed, in this order:
//
//  1. an Allow entry matching the name or the address permits;
//  2. else a Deny entry matching the name or the address refuses;
//  3. else public unicast addresses are permitted, and loopback, private
//     (RFC 1918, fc00::/7), link-local (169.254.0.0/16 with the metadata
//     address 169.254.169.254, fe80::/10), unspecified, multicast,
//     documentation (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
//     2001:db8::/32, 3fff::/20) and other special-purpose addresses are
//     refused.
//
// A HostGuard is immutable and safe for concurrent use.
type HostGuard struct {
	allow, deny hostRules
	special     []specialRange
	nat64       netip.Prefix
}

// NewHostGuard parses the allow and deny lists. An entry is a CIDR
// ("10.0.0.0/8", "::1/128"), a bare IP (a one-address CIDR), a host name
// ("api.example.com") or a domain with a leading dot (".example.com": the
// domain and all its subdomains). Names match case-insensitively.
func NewHostGuard(allow, deny []string) (*HostGuard, error) {
	a, err := parseHostRules(allow)
	if err != nil {
		return nil, fmt.Errorf("http.allow: %w", err)
	}
	d, err := parseHostRules(deny)
	if err != nil {
		return nil, fmt.Errorf("http.deny: %w", err)
	}
	return &HostGuard{allow: a, deny: d, special: specialRanges(),
		nat64: netip.MustParsePrefix(nat64Prefix)}, nil
}

// Check validates a callback URL's host (no port, IPv6 without brackets)
// without DNS: an IP literal gets every rule, a name gets the name rules.
// A name that no rule lists passes here; the addresses it resolves to are
// checked when dialed. The error is a *HostRefusedError.
func (g *HostGuard) Check(host string) error {
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	if host == "" {
		return &HostRefusedError{Reason: "the URL has no host"}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return g.check("", ip)
	}
	return g.check(host, netip.Addr{})
}

// check applies the rule order to a name, an address or both: a dial checks
// the URL's host name (empty when the URL named the IP) with the address.
func (g *HostGuard) check(name string, ip netip.Addr) error {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	ip = ip.Unmap().WithZone("")
	refused := func(reason string) error {
		return &HostRefusedError{Host: cmpHost(name, ip), IP: ip, Resolved: name != "" && ip.IsValid(), Reason: reason}
	}
	if g.allow.matches(name, ip) != "" {
		return nil
	}
	if e := g.deny.matches(name, ip); e != "" {
		return refused(fmt.Sprintf("it matches deny entry %q in the live settings' deny list", e))
	}
	if !ip.IsValid() {
		return nil // a name: its addresses are checked when dialed
	}
	if class := g.specialClass(ip); class != "" {
		return refused(fmt.Sprintf("%s addresses need an allow entry in the live settings' allow list", class))
	}
	return nil
}

// cmpHost names the host in messages: the name when there is one.
func cmpHost(name string, ip netip.Addr) string {
	if name != "" {
		return name
	}
	return ip.String()
}

// HostRefusedError says why the HostGuard refused a callback host. It
// matches task.ErrInvalid, so a target saved with such a URL is a validation
// error; at delivery it comes wrapped in task.Permanent.
type HostRefusedError struct {
	// Host is the URL's host name or IP.
	Host string
	// IP is the address refused; invalid when the name itself was refused.
	IP netip.Addr
	// Resolved is true when Host is a name and IP is what it resolved to.
	Resolved bool
	// Reason is the rule that refused, e.g. "loopback addresses need an
	// allow entry in the live settings' allow list".
	Reason string
}

// Error implements error.
func (e *HostRefusedError) Error() string {
	if e.Resolved {
		return fmt.Sprintf("callback host %s refused: it resolved to %s; %s", e.Host, e.IP, e.Reason)
	}
	return fmt.Sprintf("callback host %s refused: %s", e.Host, e.Reason)
}

// Is makes errors.Is(err, task.ErrInvalid) true.
func (e *HostRefusedError) Is(target error) bool { return target == task.ErrInvalid }

// hostRule is one allow or deny entry: a prefix, an exact name, or a
// domain (name with a leading dot).
type hostRule struct {
	prefix netip.Prefix // valid for CIDR and IP entries
	name   string       // lower case, no trailing dot; ".example.com" for a domain
	raw    string       // as written in config
}

// hostRules is a parsed allow or deny list.
type hostRules []hostRule

// parseHostRules parses list entries; see NewHostGuard.
func parseHostRules(list []string) (hostRules, error) {
	r := make(hostRules, 0, len(list))
	for _, raw := range list {
		rule, err := parseHostRule(raw)
		if err != nil {
			return nil, err
		}
		r = append(r, rule)
	}
	return r, nil
}

// parseHostRule parses one entry.
func parseHostRule(raw string) (hostRule, error) {
	s := strings.ToLower(strings.TrimSpace(raw))
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return hostRule{}, fmt.Errorf("entry %q: %w", raw, err)
		}
		return hostRule{prefix: unmapPrefix(p).Masked(), raw: raw}, nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		ip = ip.Unmap()
		return hostRule{prefix: netip.PrefixFrom(ip, ip.BitLen()), raw: raw}, nil
	}
	s = strings.TrimSuffix(s, ".")
	if !validHostPattern(s) {
		return hostRule{}, fmt.Errorf("entry %q is neither a CIDR, an IP nor a host name", raw)
	}
	return hostRule{name: s, raw: raw}, nil
}

// matches returns the entry matching name or ip as written in config, or "".
func (r hostRules) matches(name string, ip netip.Addr) string {
	for _, rule := range r {
		switch {
		case rule.prefix.IsValid():
			if ip.IsValid() && rule.prefix.Contains(ip) {
				return rule.raw
			}
		case name == "":
		case strings.HasPrefix(rule.name, "."):
			if name == rule.name[1:] || strings.HasSuffix(name, rule.name) {
				return rule.raw
			}
		case name == rule.name:
			return rule.raw
		}
	}
	return ""
}

// unmapPrefix turns ::ffff:a.b.c.d/n (n >= 96) into a.b.c.d/(n-96).
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// validHostPattern reports whether s is a host name, optionally with a
// leading dot: labels of letters, digits, '-' and '_'.
func validHostPattern(s string) bool {
	s = strings.TrimPrefix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
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

// specialRange is a special-purpose range refused by default.
type specialRange struct {
	prefix netip.Prefix
	class  string
}

// specialRanges returns the special-purpose ranges refused by default beyond
// what netip's predicates name (IANA special-purpose registries).
func specialRanges() []specialRange {
	return []specialRange{
		{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
		{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
		{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
		{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
		{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
		{netip.MustParsePrefix("100::/64"), "reserved"},
		// Documentation ranges (RFC 5737, RFC 3849, RFC 9637): never a
		// real service, so a target naming one is a mistake or a probe.
		{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
		{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
		{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
		{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
		{netip.MustParsePrefix("3fff::/20"), "documentation"},
	}
}

// nat64Prefix is the well-known NAT64 prefix; its addresses embed an IPv4
// address, which is what the gateway connects to.
const nat64Prefix = "64:ff9b::/96"

// specialClass names the class of a non-public address, or "" for a public
// unicast one.
func (g *HostGuard) specialClass(ip netip.Addr) string {
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, s := range g.special {
		if s.prefix.Contains(ip) {
			return s.class
		}
	}
	if g.nat64.Contains(ip) {
		b := ip.As16()
		if class := g.specialClass(netip.AddrFrom4([4]byte(b[12:]))); class != "" {
			return class + " (via NAT64)"
		}
	}
	return ""
}
