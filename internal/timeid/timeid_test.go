package timeid

import (
	"sort"
	"strings"
	"testing"
	"time"
)

func TestOrderFollowsTime(t *testing.T) {
	base := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	for _, alphabet := range []string{Base32, Base36} {
		var ids []string
		for i := range 2000 {
			// Steps of every size, past each digit's carry.
			ids = append(ids, New("x_", alphabet, 20, base.Add(time.Duration(i*i*i)*time.Millisecond)))
		}
		if !sort.StringsAreSorted(ids) {
			t.Fatalf("alphabet %q: identifiers of increasing times are not in order", alphabet)
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if len(id) != 22 || !strings.HasPrefix(id, "x_") {
				t.Fatalf("id %q: want x_ and 20 characters", id)
			}
			for _, c := range id[2:] {
				if !strings.ContainsRune(alphabet, c) {
					t.Fatalf("id %q has %q, not in %q", id, c, alphabet)
				}
			}
			if seen[id] {
				t.Fatalf("id %q made twice", id)
			}
			seen[id] = true
		}
	}
}

func TestAlphabetsInASCIIOrder(t *testing.T) {
	for _, a := range []string{Base32, Base36} {
		if !sort.SliceIsSorted([]byte(a), func(i, j int) bool { return a[i] < a[j] }) {
			t.Errorf("alphabet %q is not in ASCII order", a)
		}
	}
}

func TestRandomPartUsesWholeAlphabet(t *testing.T) {
	now := time.Now()
	for _, alphabet := range []string{Base32, Base36} {
		count := map[byte]int{}
		for range 2000 {
			id := New("", alphabet, 20, now)
			for i := timeChars; i < len(id); i++ {
				count[id[i]]++
			}
		}
		// 22,000 draws over at most 36 characters: each is expected
		// ~600 times; fewer than 300 would be a broken mapping.
		for i := range len(alphabet) {
			if c := count[alphabet[i]]; c < 300 {
				t.Errorf("alphabet %q: %q drawn %d times of 22,000", alphabet, alphabet[i], c)
			}
		}
	}
}

func TestSameMillisecondDiffers(t *testing.T) {
	now := time.Now()
	a, b := New("", Base32, 20, now), New("", Base32, 20, now)
	if a[:timeChars] != b[:timeChars] {
		t.Fatalf("%q and %q: the same instant has two time parts", a, b)
	}
	if a == b {
		t.Fatalf("two identifiers of one instant are equal: %q", a)
	}
}
