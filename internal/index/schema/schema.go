// Package schema names the fields of the full-text index — what each holds, how its words
// are analyzed and how much a match in it weighs — so that the projection that builds the
// index (package index) and the searches over it (package search) agree on them without
// either knowing the other.
package schema

// Field names of the mapping. The ranked text fields and their weights are listed in
// Ranked.
const (
	Name       = "name"        // the file name less its extensions
	Path       = "path"        // the words of the folders holding the document
	Title      = "title"       // the plain text of the title (text.Markdown.Title)
	Headings   = "headings"    // every Markdown heading
	Meta       = "meta"        // front matter description and tags
	Lead       = "lead"        // the first paragraph of prose
	Content    = "content"     // the text, exact words (with positions, for phrases)
	ContentCJK = "content_cjk" // the CJK runs of the text, as bigrams
	Folders    = "folders"     // every ancestor folder: "a", "a/b" (for scoping)
	Dir        = "dir"         // the folder holding the document ("." for the root)
	Session    = "session"     // a session document's session token; TreeSession for the tree
	Ext        = "ext"         // the extension, lower case, without the dot
)

// The analyzers of the mapping. "word" is the exact one: it splits where ripgrep's -w
// sees a word boundary and folds case the way ripgrep's -i compares (text.Words,
// text.Fold), so that every document `rg -l -w -i WORD` lists holds the term WORD.
// "stem" adds English stemming on the same words; "parts" adds the parts of words written
// in camel case before stemming; "cjk" indexes bigrams of the Chinese, Japanese and Korean
// runs, which ripgrep cannot find inside a sentence without spaces but a reader expects to.
const (
	AnalyzerWord  = "guide_word"
	AnalyzerStem  = "guide_stem"
	AnalyzerCJK   = "guide_cjk"
	AnalyzerParts = "guide_parts"
)

// Field is a text field a word is searched in, and how much a match there weighs.
type Field struct {
	Name      string
	Boost     float64
	Positions bool // phrases and proximity are matched in it
	Stemmed   bool // its words are indexed by their English stem (AnalyzerParts)
}

// Ranked are the text fields of the mapping that every word query searches, with their
// weights: what a document says it is about (its name, title, front matter, headings and
// opening paragraph) weighs more than a passing mention in its body. The Markdown fields
// are short, and indexed by their words' English stems, so that "cookies" finds a title
// "cookie-parser"; the name and the content keep their exact words (the content's are what
// `rg -w -i` finds), and the other forms of a word ("dragons" for "dragon") are looked up
// in their dictionaries.
var Ranked = []Field{
	{Name, 2.0, true, false},
	{Path, 1.0, false, true},
	{Title, 1.0, true, true},
	{Meta, 1.0, false, true},
	{Headings, 0.5, false, true},
	{Lead, 2.0, false, true},
	{Content, 1.0, true, false},
}

// TreeSession marks the documents of the tree in the session field.
const TreeSession = "-"

// DirKey is how the dir field names a folder: the root, "" elsewhere, is ".".
func DirKey(dir string) string {
	if dir == "" || dir == "." {
		return "."
	}
	return dir
}
