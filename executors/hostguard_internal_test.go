package executors

import (
	"net/netip"
	"strings"
	"testing"
)

// TestHostGuardDialCheck covers the check made on each dialed address,
// which sees the URL's host name together with the address.
func TestHostGuardDialCheck(t *testing.T) {
	t.Parallel()
	g, err := NewHostGuard([]string{"internal.corp", ".svc.local"}, []string{".evil.example", "203.0.113.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, host, ip string
		refused        string
	}{
		{name: "AllowedNameOnPrivateAddress", host: "internal.corp", ip: "10.0.0.7"},
		{name: "AllowedDomainOnLoopback", host: "api.svc.local", ip: "127.0.0.1"},
		{name: "RebindToLoopback", host: "public.example.com", ip: "127.0.0.1", refused: "callback host public.example.com refused: it resolved to 127.0.0.1; loopback addresses"},
		{name: "RebindToMetadata", host: "public.example.com", ip: "169.254.169.254", refused: "link-local"},
		{name: "RebindToMappedPrivate", host: "public.example.com", ip: "::ffff:192.168.0.1", refused: "private"},
		{name: "ZonedLinkLocal", host: "public.example.com", ip: "fe80::1%eth0", refused: "link-local"},
		{name: "PublicAddress", host: "public.example.com", ip: "8.8.4.4"},
		{name: "DeniedDomainOnPublicAddress", host: "x.evil.example", ip: "8.8.4.4", refused: "deny entry \".evil.example\""},
		{name: "DeniedAddressOfName", host: "public.example.com", ip: "203.0.113.9", refused: "deny entry \"203.0.113.0/24\""},
		{name: "IPLiteralURL", host: "", ip: "127.0.0.1", refused: "callback host 127.0.0.1 refused: loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := g.check(tt.host, netip.MustParseAddr(tt.ip))
			switch {
			case tt.refused == "" && err != nil:
				t.Errorf("check(%q, %s) = %v, want nil", tt.host, tt.ip, err)
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
				t.Errorf("check(%q, %s) = %v, want an error containing %q", tt.host, tt.ip, err, tt.refused)
			}
		})
	}
}
