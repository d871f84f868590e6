package task

import (
	"fmt"
	"net/mail"
	"strings"
)

// MaxEmail is the longest email address accepted: the longest SMTP can
// carry (RFC 5321 path limit).
const MaxEmail = 254

// AddressError says why an email address or a phone number is refused. It
// matches ErrInvalid. Its text quotes the value (cut to 64 bytes) and says
// what is wrong and how to write it.
type AddressError struct {
	Value  string
	Reason string
}

// Error implements error.
func (e *AddressError) Error() string {
	return fmt.Sprintf("%q %s", Truncate(e.Value, 64), e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *AddressError) Is(target error) bool { return target == ErrInvalid }

// CheckEmail is the one email address rule, for rows, jobs, targets and
// delivery alike: one bare ASCII address such as "ann@example.com" — no
// display name, no angle brackets, no spaces, at most MaxEmail bytes, and
// no non-ASCII characters (mail goes without SMTPUTF8: write international
// domains in punycode, xn--…). Errors are *AddressError.
func CheckEmail(addr string) error {
	fail := func(reason string) error { return &AddressError{Value: addr, Reason: reason} }
	switch {
	case addr == "":
		return fail("is not an email address: it is empty")
	case len(addr) > MaxEmail:
		return fail(fmt.Sprintf("is not an email address we can send to: longer than %d bytes", MaxEmail))
	}
	for i := range len(addr) {
		if addr[i] > '~' || addr[i] < ' ' {
			return fail("is not an email address we can send to: it has non-ASCII or control characters; " +
				"write an international domain in punycode (xn--…)")
		}
	}
	a, err := mail.ParseAddress(addr)
	at := strings.LastIndexByte(addr, '@')
	if err != nil || a.Name != "" || a.Address != addr || at <= 0 || at == len(addr)-1 {
		return fail("is not an email address (write one bare address, like name@example.com)")
	}
	return nil
}

// CheckPhone is the one phone number rule: E.164, a '+', a non-zero digit,
// then 6 to 14 more digits (^\+[1-9]\d{6,14}$), no spaces or dashes.
// Errors are *AddressError.
func CheckPhone(s string) error {
	ok := len(s) >= 8 && len(s) <= 16 && s[0] == '+' && s[1] >= '1' && s[1] <= '9'
	for i := 2; ok && i < len(s); i++ {
		ok = s[i] >= '0' && s[i] <= '9'
	}
	if !ok {
		return &AddressError{Value: s, Reason: "is not an E.164 phone number (a + and 7 to 15 digits, no spaces, like +8613800138000)"}
	}
	return nil
}
