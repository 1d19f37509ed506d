package querylang

import "strings"

// stopWords are words so common in English, German and Russian that, unquoted, they
// would match most of a tree: they rank results, but do not filter them.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, list := range []string{
		// English
		"a an and are as at be but by for from has have i if in into is it its of on or " +
			"that the their there these they this to was were will with " +
			// question words: agents ask in sentences
			"who what where when why how which do does did about",
		// German
		"der die das den dem des ein eine einer eines einem einen und oder ist sind zu im " +
			"in von mit auf für nicht es",
		// Russian
		"и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по " +
			"от из о это",
	} {
		for _, w := range strings.Fields(list) {
			m[w] = true
		}
	}
	return m
}()
