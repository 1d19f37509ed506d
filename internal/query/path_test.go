package query_test

import (
	"strings"
	"testing"

	"github.com/guide/guide/internal/query"
)

func TestCleanPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      query.ErrorType
	}{
		{"", "", ""},
		{".", "", ""},
		{"Characters", "Characters", ""},
		{"Characters/", "Characters", ""},
		{"./Characters//Elara.md", "Characters/Elara.md", ""},
		{"Notes and drafts/idées.md", "Notes and drafts/idées.md", ""},
		{"~notes.md", "~notes.md", ""},
		{"100%.md", "100%.md", ""},
		{"..", "", query.ErrInvalidPath},
		{"../etc/passwd", "", query.ErrInvalidPath},
		{"a/../../b", "", query.ErrInvalidPath},
		{"a/..", "", query.ErrInvalidPath},
		{`..\..\windows`, "", query.ErrInvalidPath},
		{"/etc/passwd", "", query.ErrInvalidPath},
		{`\\server\share`, "", query.ErrInvalidPath},
		{"C:/Windows", "", query.ErrInvalidPath},
		{"~/secrets", "", query.ErrInvalidPath},
		// What is absolute once "." and empty segments are dropped is absolute.
		{`./\server\share`, "", query.ErrInvalidPath},
		{"./C:/Windows", "", query.ErrInvalidPath},
		{".//~/secrets", "", query.ErrInvalidPath},
		{"a\x00b", "", query.ErrInvalidPath},
		{"%2e%2e/%2e%2e/etc/passwd", "", query.ErrInvalidPath},
		{"..%2Fsecret", "", query.ErrInvalidPath},
		{"%2Fetc%2Fpasswd", "", query.ErrInvalidPath},
		{"bad\xffutf8", "", query.ErrInvalidPath},
		{"bad\ufffdutf8", "", query.ErrInvalidPath}, // what JSON makes of invalid UTF-8
		{"./sub/../sub/in.md", "", query.ErrInvalidPath},
		{strings.Repeat("a/", 3000), "", query.ErrInvalidPath},
	} {
		got, err := query.CleanPath(tc.in)
		switch {
		case tc.err != "" && (err == nil || err.Type != tc.err):
			t.Errorf("CleanPath(%q) = %q, %v; want error %s", tc.in, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestCleanPathMessages: the message says what is wrong with the path.
func TestCleanPathMessages(t *testing.T) {
	for _, tc := range []struct{ in, says string }{
		{"./sub/../sub/in.md", `it means "sub/in.md"`},
		{"a/..", `it means ""`},
		{"a/../../b", "leaves the project root"},
		{"bad\ufffdutf8", "not valid UTF-8"},
		{"bad\xffutf8", "not valid UTF-8"},
	} {
		_, err := query.CleanPath(tc.in)
		if err == nil || !strings.Contains(err.Message, tc.says) {
			t.Errorf("CleanPath(%q) = %v; want a message saying %q", tc.in, err, tc.says)
		}
	}
}

// FuzzCleanPath: whatever it accepts is relative, clean, and inside the root.
func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"", "a/b", "../x", "/abs", "a/./b//", "%2e%2e", `..\x`, "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := query.CleanPath(in)
		if err != nil {
			if err.Type != query.ErrInvalidPath || err.Message == "" || err.Instruction == "" {
				t.Fatalf("CleanPath(%q): error without type, message or instruction: %#v", in, err)
			}
			return
		}
		if strings.HasPrefix(got, "/") || strings.HasSuffix(got, "/") || strings.Contains(got, "//") ||
			strings.ContainsRune(got, 0) {
			t.Fatalf("CleanPath(%q) = %q: not clean", in, got)
		}
		// ".." is refused with either slash as the separator; "." only matters with '/'
		// (on Linux, `.\` is an ordinary file name).
		for _, seg := range strings.FieldsFunc(got, func(r rune) bool { return r == '/' || r == '\\' }) {
			if seg == ".." {
				t.Fatalf("CleanPath(%q) = %q keeps a '..' segment", in, got)
			}
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == "." {
				t.Fatalf("CleanPath(%q) = %q keeps a '.' segment", in, got)
			}
		}
		if again, _ := query.CleanPath(got); again != got {
			t.Fatalf("CleanPath is not idempotent: %q → %q → %q", in, got, again)
		}
	})
}
