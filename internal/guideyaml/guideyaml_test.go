package guideyaml

import (
	"errors"
	"strings"
	"testing"
)

const good = `# test
categories:
  guidelines:
    dir: guidelines
    patterns: ["*.md"]
    description: How we work
  lang:
    dir: ./lang/
    patterns: "**/*"
  root:
    dir: ""
collections:
  everything:
    categories: [guidelines, lang]
    description: All of it
`

func TestParse(t *testing.T) {
	c, err := Parse("guide.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if g := c.Categories["guidelines"]; g.Dir != "guidelines" || g.Patterns[0] != "*.md" || g.Description != "How we work" {
		t.Errorf("guidelines = %+v", g)
	}
	if l := c.Categories["lang"]; l.Dir != "lang" || l.Patterns[0] != "**/*" {
		t.Errorf("lang = %+v", l)
	}
	if r := c.Categories["root"]; r.Dir != "" || r.Patterns[0] != DefaultPattern {
		t.Errorf("root = %+v", r)
	}
	if e := c.Collections["everything"]; strings.Join(e.Categories, ",") != "guidelines,lang" {
		t.Errorf("everything = %+v", e)
	}
	// Reformatting changes nothing of the canonical form.
	c2, err := Parse("guide.yaml", []byte(strings.ReplaceAll(good, "# test\n", "\n\n")))
	if err != nil || c2.Hash() != c.Hash() {
		t.Errorf("hash changed with formatting: %v", err)
	}
	back, err := Decode(c.Canonical())
	if err != nil || back.Hash() != c.Hash() {
		t.Errorf("canonical round trip: %v", err)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, s := range []string{"", "# nothing\n", "~\n"} {
		c, err := Parse("guide.yaml", []byte(s))
		if err != nil || len(c.Categories) != 0 || c.IsDefault() {
			t.Errorf("Parse(%q) = %+v, %v", s, c, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		line       int
		problem    string
	}{
		{"Syntax", "categories:\n  a:\n    dir: x\n   bad: [\n", -1, ""}, // the library reports the enclosing block's line
		{"UnknownTopKey", "categorys:\n  a: {}\n", 1, `unknown key "categorys"`},
		{"UnknownCategoryKey", "categories:\n  a:\n    folder: x\n", 3, `unknown key "folder"`},
		{"BadPattern", "categories:\n  a:\n    patterns:\n      - ok.md\n      - \"[abc\"\n", 5, `pattern "[abc"`},
		{"DirLeavesRoot", "categories:\n  a:\n    dir: ../x\n", 3, "leaves the content root"},
		{"UnknownCategoryInCollection", "categories:\n  a: {}\ncollections:\n  c:\n    categories: [a, b]\n", 5, `no category "b"`},
		{"BadName", "categories:\n  \"a b\": {}\n", 2, "white space"},
		{"NotAMapping", "- a\n- b\n", 1, "must be a mapping"},
		{"EmptyCollection", "categories:\n  a: {}\ncollections:\n  c: {}\n", 4, "has no categories"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("guide.yaml", []byte(c.yaml))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if pe.File != "guide.yaml" || (c.line > 0 && pe.Line != c.line) || pe.Line <= 0 || !strings.Contains(pe.Problem, c.problem) {
				t.Errorf("err = %q (line %d), want line %d and %q", err, pe.Line, c.line, c.problem)
			}
			if !strings.HasPrefix(err.Error(), "guide.yaml:") {
				t.Errorf("err %q does not name the file", err)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	c := Default([]string{"guidelines", ".hidden", "lang", "Notes and drafts"})
	cats, cols := c.Names()
	if strings.Join(cats, ",") != "guidelines,lang" || strings.Join(cols, ",") != "all" {
		t.Errorf("names = %v %v", cats, cols)
	}
	if strings.Join(c.Collections["all"].Categories, ",") != "guidelines,lang" {
		t.Errorf("all = %v", c.Collections["all"].Categories)
	}
	if !c.IsDefault() {
		t.Error("default is not default")
	}
}

// TestParseRefusesAFileOverTheLimit: a valid file over MaxFileBytes is an error naming the
// file and the limit, not a configuration.
func TestParseRefusesAFileOverTheLimit(t *testing.T) {
	data := []byte("categories:\n  a:\n    description: \"" + strings.Repeat("x", MaxFileBytes) + "\"\n")
	_, err := Parse("guide.yaml", data)
	var ge *Error
	if !errors.As(err, &ge) || ge.File != "guide.yaml" || !strings.Contains(ge.Problem, "the limit is 1048576 bytes") {
		t.Fatalf("Parse of %d bytes: %v; want an error naming guide.yaml and the limit", len(data), err)
	}
}
