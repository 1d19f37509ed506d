package index

// rankedField is a text field a word is searched in, and how much a match there weighs.
type rankedField struct {
	name      string
	boost     float64
	positions bool // phrases and proximity are matched in it
	stemmed   bool // its words are indexed by their English stem
}

// rankedFields are the text fields of the mapping that every word query searches, with
// their weights: what a document says it is about (its name, title, front matter, headings
// and opening paragraph) weighs more than a passing mention in its body. The Markdown
// fields are short, and indexed by their words' English stems, so that "cookies" finds a
// title "cookie-parser"; the name and the content keep their exact words (the content's
// are what `rg -w -i` finds), and the other forms of a word ("dragons" for "dragon") are
// looked up in their dictionaries.
var rankedFields = []rankedField{
	{fieldName, 2.0, true, false},
	{fieldPath, 1.0, false, true},
	{fieldTitle, 1.0, true, true},
	{fieldMeta, 1.0, false, true},
	{fieldHeadings, 0.5, false, true},
	{fieldLead, 2.0, false, true},
	{fieldContent, 1.0, true, false},
}
