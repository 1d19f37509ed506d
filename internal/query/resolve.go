package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/guide/guide/internal/guideyaml"
)

func resolveName(cfg *guideyaml.Config, req ContentRequest) (cats []string, collection string, qerr *Error) {
	name := req.Name
	if req.Kind != CollectionOnly {
		if _, ok := cfg.Categories[name]; ok {
			return []string{name}, "", nil
		}
	}
	if req.Kind != CategoryOnly {
		if c, ok := cfg.Collections[name]; ok {
			return c.Categories, name, nil
		}
	}
	catNames, colNames := cfg.Names()
	what := map[Kind]string{CategoryOrCollection: "Category or collection", CategoryOnly: "Category", CollectionOnly: "Collection"}[req.Kind]
	msg := fmt.Sprintf("%s '%s' not found", what, name)
	if req.Kind != CollectionOnly {
		msg += fmt.Sprintf("; categories: %s", listOrNone(catNames))
	}
	if req.Kind != CategoryOnly {
		msg += fmt.Sprintf("; collections: %s", listOrNone(colNames))
	}
	return nil, "", Errorf(ErrNotFound, "%s", msg)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	const max = 30
	if len(names) > max {
		return strings.Join(names[:max], ", ") + fmt.Sprintf(", … (%d more)", len(names)-max)
	}
	return strings.Join(names, ", ")
}

func noMatches(cfg *guideyaml.Config, req ContentRequest, cats []string, collection string) *Error {
	where := fmt.Sprintf("category '%s'", cats[0])
	if collection != "" {
		where = fmt.Sprintf("collection '%s' (categories %s)", collection, listOrNone(cats))
	}
	if req.Pattern != "" {
		return Errorf(ErrNoMatches, "no documents in %s match pattern '%s'", where, req.Pattern)
	}
	var pats []string
	for _, c := range cats {
		pats = append(pats, cfg.Categories[c].Patterns...)
	}
	slices.Sort(pats)
	return Errorf(ErrNoMatches, "no documents in %s match its patterns (%s)", where, strings.Join(slices.Compact(pats), ", "))
}
