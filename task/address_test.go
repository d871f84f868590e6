package task_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"cronsheet/task"
)

func TestCheckEmail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		ok   bool
	}{
		{"ann@example.com", true},
		{"ann.b+tag@sub.example.co.uk", true},
		{"root@localhost", true},
		{"", false},
		{"ann", false},
		{"ann@", false},
		{"@example.com", false},
		{"Ann <ann@example.com>", false},
		{"<ann@example.com>", false},
		{" ann@example.com", false},
		{"ann@example.com, bob@example.com", false},
		{"ann@example.com\r\nBcc: eve@example.com", false},
		{strings.Repeat("a", 250) + "@b.co", false},
		{"jöhn@example.com", false},
		{"ann@exämple.com", false},
		{"ann@example.com\x00", false},
		{"john@xn--exmple-cua.de", true},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			err := task.CheckEmail(tt.addr)
			if (err == nil) != tt.ok {
				t.Errorf("CheckEmail(%q) = %v, want ok=%v", tt.addr, err, tt.ok)
			}
			if err != nil && !errors.Is(err, task.ErrInvalid) {
				t.Errorf("CheckEmail(%q) = %v, want it to wrap task.ErrInvalid", tt.addr, err)
			}
		})
	}
}

func TestCheckPhone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		num string
		ok  bool
	}{
		{"+14155550100", true},
		{"+4930123456", true},
		{"+1234567", true},         // 7 digits, the shortest
		{"+123456789012345", true}, // 15 digits, the longest
		{"", false},
		{"+", false},
		{"+123456", false},
		{"+1234567890123456", false},
		{"14155550100", false},
		{"+04155550100", false},
		{"+1 415 555 0100", false},
		{"+1-415-555-0100", false},
		{"+1415555010a", false},
		{"+１４１５５５５０１００", false},
	}
	for _, tt := range tests {
		t.Run(tt.num, func(t *testing.T) {
			t.Parallel()
			err := task.CheckPhone(tt.num)
			if (err == nil) != tt.ok {
				t.Errorf("CheckPhone(%q) = %v, want ok=%v", tt.num, err, tt.ok)
			}
			if err != nil && !errors.Is(err, task.ErrInvalid) {
				t.Errorf("CheckPhone(%q) = %v, want it to wrap task.ErrInvalid", tt.num, err)
			}
		})
	}
}

func ExampleCheckEmail() {
	fmt.Println(task.CheckEmail("ann@example.com"))
	fmt.Println(task.CheckEmail("Ann <ann@example.com>"))
	// Output:
	// <nil>
	// "Ann <ann@example.com>" is not an email address (write one bare address, like name@example.com)
}

func ExampleCheckPhone() {
	fmt.Println(task.CheckPhone("+14155550100"))
	err := task.CheckPhone("415-555-0100")
	fmt.Println(errors.Is(err, task.ErrInvalid))
	// Output:
	// <nil>
	// true
}
