package executors

import (
	"fmt"
	"net/mail"
	"strings"

	"cronsheet/task"
)

// maxEmailLen is the longest address SMTP can carry (RFC 5321 path limit).
const maxEmailLen = 254

// ValidEmail reports whether addr is a bare ASCII email address such as
// "ann@example.com": no display name, no angle brackets, no spaces, and no
// non-ASCII characters (write international domains in punycode; SMTPUTF8 is
// not used). The error wraps task.ErrInvalid.
func ValidEmail(addr string) error {
	if addr == "" {
		return fmt.Errorf("empty email address: %w", task.ErrInvalid)
	}
	if len(addr) > maxEmailLen {
		return fmt.Errorf("email address longer than %d bytes: %w", maxEmailLen, task.ErrInvalid)
	}
	for i := range len(addr) {
		if addr[i] > '~' {
			return fmt.Errorf("email address %q has non-ASCII characters: %w", addr, task.ErrInvalid)
		}
	}
	a, err := mail.ParseAddress(addr)
	if err != nil || a.Name != "" || a.Address != addr {
		return fmt.Errorf("invalid email address %q: %w", addr, task.ErrInvalid)
	}
	if at := strings.LastIndexByte(addr, '@'); at <= 0 || at == len(addr)-1 {
		return fmt.Errorf("invalid email address %q: %w", addr, task.ErrInvalid)
	}
	return nil
}

// ValidPhone reports whether s is an E.164 phone number: a '+', a non-zero
// digit, then 6 to 14 more digits (^\+[1-9]\d{6,14}$). The error wraps
// task.ErrInvalid.
func ValidPhone(s string) error {
	ok := len(s) >= 8 && len(s) <= 16 && s[0] == '+' && s[1] >= '1' && s[1] <= '9'
	for i := 2; ok && i < len(s); i++ {
		ok = s[i] >= '0' && s[i] <= '9'
	}
	if !ok {
		return fmt.Errorf("invalid phone number %q, want E.164 like +14155550100: %w", s, task.ErrInvalid)
	}
	return nil
}
