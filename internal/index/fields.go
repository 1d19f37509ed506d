package index

// rankedField is a text field a word is searched in, and how much a match there weighs.
type rankedField struct {
	name      string
	boost     float64
	positions bool // phrases and proximity are matched in it
}

// rankedFields are the text fields of the mapping that every word query searches, with
// their weights: what a document says it is about (its name, title, front matter, headings
// and opening paragraph) weighs more than a passing mention in its body. The forms of a
// word ("dragons" for "dragon") are looked up in the content's dictionary and the name's:
// every other field's words are words of the content.
var rankedFields = []rankedField{
	{fieldName, 2.0, true},
	{fieldTitle, 1.0, true},
	{fieldMeta, 1.0, false},
	{fieldHeadings, 0.5, false},
	{fieldLead, 1.0, false},
	{fieldContent, 1.0, true},
}
