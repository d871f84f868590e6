// Package timeid makes identifiers that sort by the time they were made.
//
// An identifier is a prefix, nine characters of the wall clock in
// milliseconds and random characters after them, all from one alphabet in
// ASCII order. Identifiers made later sort after those made earlier (to the
// millisecond), so rows keyed or indexed by them are appended at the right
// edge of a B-tree instead of anywhere in it: a transaction of 500 new runs
// touches a few index pages rather than up to 500 (docs/BENCHMARKS.md,
// "Drain at 100,000: time-ordered identifiers and the writer's page cache").
package timeid

import (
	"crypto/rand"
	"fmt"
	"time"
)

// Alphabets in ASCII order, so that the order of identifiers is the order
// of their times.
const (
	// Base32 is the characters of crypto/rand.Text, in ASCII order.
	Base32 = "234567ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	// Base36 is digits and lower-case letters.
	Base36 = "0123456789abcdefghijklmnopqrstuvwxyz"
)

// timeChars is how many characters hold the time: 32⁹ ms is past the year
// 3000, 36⁹ ms further still.
const timeChars = 9

// New returns prefix followed by n characters of alphabet (its characters
// in ASCII order, 2 to 256 of them): the first nine encode t in
// milliseconds since the Unix epoch, the others are random. n must be
// larger than nine; the random part of 11 characters of Base32 holds 55
// bits.
func New(prefix, alphabet string, n int, t time.Time) string {
	if n <= timeChars || len(alphabet) < 2 || len(alphabet) > 256 {
		panic(fmt.Sprintf("timeid: %d characters of a %d-character alphabet", n, len(alphabet)))
	}
	b := make([]byte, len(prefix)+n)
	copy(b, prefix)
	out := b[len(prefix):]
	base := uint64(len(alphabet))
	ms := uint64(max(t.UnixMilli(), 0))
	for i := timeChars - 1; i >= 0; i-- {
		out[i] = alphabet[ms%base]
		ms /= base
	}
	// Random bytes below the largest multiple of the alphabet's size map
	// onto it evenly; the others are drawn again.
	below := 256 - 256%len(alphabet)
	var buf [32]byte
	for i, used := timeChars, len(buf); i < n; used++ {
		if used == len(buf) {
			rand.Read(buf[:]) // never fails (crypto/rand, Go 1.24+)
			used = 0
		}
		if int(buf[used]) < below {
			out[i] = alphabet[int(buf[used])%len(alphabet)]
			i++
		}
	}
	return string(b)
}
