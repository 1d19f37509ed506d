package events_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guide/guide/internal/events"
)

func TestEncodeToken(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"with-dash_and_underscore", "with-dash_and_underscore"},
		{"a.md", "a%2Emd"},
		{"two words", "two%20words"},
		{"*", "%2A"},
		{">", "%3E"},
		{"100%", "100%25"},
		{"idées", "id%C3%A9es"},
		{"", "%"},
		{"\x00", "%00"},
	} {
		got := events.EncodeToken(tc.in)
		if got != tc.want {
			t.Errorf("EncodeToken(%q) = %q, want %q", tc.in, got, tc.want)
		}
		back, err := events.DecodeToken(got)
		if err != nil || back != tc.in {
			t.Errorf("DecodeToken(%q) = %q, %v; want %q", got, back, err, tc.in)
		}
	}
}

func TestDecodeTokenRefusesNonCanonical(t *testing.T) {
	for _, tok := range []string{"", "a.b", "%2e", "%41", "%4", "%", "a%", "a b", "é", "%zz"} {
		if tok == "%" {
			continue // the empty name
		}
		if _, err := events.DecodeToken(tok); err == nil {
			t.Errorf("DecodeToken(%q) accepted a token EncodeToken never writes", tok)
		}
	}
}

func TestSubjects(t *testing.T) {
	s := events.NewSubjects("my notes")
	doc, err := s.Document("Characters/Elara Voss.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "guide.my%20notes.doc.Characters.Elara%20Voss%2Emd"; doc != want {
		t.Fatalf("Document = %q, want %q", doc, want)
	}
	folder, _ := s.Folder("Characters")
	if !strings.HasPrefix(doc, strings.TrimSuffix(folder, ">")) {
		t.Errorf("folder filter %q does not select %q", folder, doc)
	}
	p, err := s.ParseDocument(doc)
	if err != nil || p != "Characters/Elara Voss.md" {
		t.Errorf("ParseDocument = %q, %v", p, err)
	}
	if proj, _ := events.ProjectOf(doc); proj != "my notes" {
		t.Errorf("ProjectOf = %q", proj)
	}
	if _, err := s.Document(strings.Repeat("長", 2000)); err == nil {
		t.Error("a path longer than a subject may be was encoded")
	}
}

// FuzzSubjectRoundTrip: any path, any bytes, round-trips through its subject, and the
// subject is a valid NATS subject: no white space, no wildcard tokens, no empty tokens.
func FuzzSubjectRoundTrip(f *testing.F) {
	for _, s := range []string{"a", "a/b.md", "dir with space/ファイル.md", "x/../y", "*/>", "%41", "a//b", "\t\n"} {
		f.Add("proj", s)
	}
	f.Fuzz(func(t *testing.T, project, path string) {
		s := events.NewSubjects(project)
		subj, err := s.Document(path)
		if path == "" {
			if err == nil {
				t.Fatal("empty path encoded")
			}
			return
		}
		if err != nil {
			return // too long
		}
		for _, tok := range strings.Split(subj, ".") {
			if tok == "" || tok == "*" || tok == ">" {
				t.Fatalf("subject %q has token %q", subj, tok)
			}
		}
		if strings.ContainsAny(subj, " \t\r\n\f\x00") || !utf8.ValidString(subj) {
			t.Fatalf("subject %q has white space or invalid bytes", subj)
		}
		back, err := s.ParseDocument(subj)
		if err != nil || back != path {
			t.Fatalf("round trip of %q via %q = %q, %v", path, subj, back, err)
		}
		if p, err := events.ProjectOf(subj); err != nil || p != project {
			t.Fatalf("ProjectOf(%q) = %q, %v; want %q", subj, p, err, project)
		}
	})
}

// FuzzDecodeToken: decoding never panics, and what decodes re-encodes to the same token.
func FuzzDecodeToken(f *testing.F) {
	for _, s := range []string{"abc", "%2E", "%", "%zz", "a%2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		name, err := events.DecodeToken(tok)
		if err != nil {
			return
		}
		if again := events.EncodeToken(name); again != tok {
			t.Fatalf("DecodeToken(%q) = %q, which encodes as %q", tok, name, again)
		}
	})
}

// TestStandIn: a stand-in path fits in a subject, is valid UTF-8, and is the same for the
// same path and different for different ones.
func TestStandIn(t *testing.T) {
	seg := strings.Repeat("文", 80)
	a := strings.Repeat(seg+"/", 5) + strings.Repeat("名", 40) + ".md"
	b := strings.Repeat(seg+"/", 5) + strings.Repeat("名", 40) + ".txt"
	subj := events.NewSubjects("p")
	if _, err := subj.Document(a); !errors.Is(err, events.ErrPathTooLong) {
		t.Fatalf("the test path fits: %v", err)
	}
	for _, p := range []string{a, b} {
		s := events.StandIn(p)
		if !utf8.ValidString(s) || !strings.HasPrefix(s, events.TooLongFolder+"/") {
			t.Errorf("StandIn = %q", s)
		}
		if _, err := subj.Document(s); err != nil {
			t.Errorf("events.StandIn(%q...) does not fit: %v", p[:20], err)
		}
	}
	if events.StandIn(a) != events.StandIn(a) || events.StandIn(a) == events.StandIn(b) {
		t.Error("stand-ins not stable or not distinct")
	}
}
