package search

import (
	"slices"
	"strings"

	bq "github.com/blevesearch/bleve/v2/search/query"

	"github.com/guide/guide/internal/index/schema"
)

// Scope admits the documents of the tree below Subtree ("" for all of it) or directly in
// one of DirectIn, and the documents of the session Session ("" for none). Session
// documents never match a search without a Scope naming their session.
type Scope struct {
	Session  string
	Subtree  string
	DirectIn []string
}

// Match reports whether the scope admits a document, as the search's filter does: session
// is its session token ("" for a document of the tree), docPath its path (a session
// document's file name). It answers for documents the index does not hold yet.
func (sc Scope) Match(session, docPath string) bool {
	if session != "" {
		return sc.Session != "" && session == sc.Session
	}
	dir := ""
	if i := strings.LastIndexByte(docPath, '/'); i >= 0 {
		dir = docPath[:i]
	}
	return sc.Subtree == "" || dir == sc.Subtree || strings.HasPrefix(dir, sc.Subtree+"/") ||
		slices.Contains(sc.DirectIn, dir)
}

// admitsAll reports whether the scope of a search admits every document of the index: the
// whole tree, and the index holds no session's documents but those of the scope's session.
// Session documents whose removal is not yet merged away count as held.
func (v view) admitsAll(folder string, sc *Scope) bool {
	key := folder + scopeKey(sc)
	if v.part != nil && v.part.st != nil {
		if all, ok := v.part.st.AdmitsAll[key]; ok {
			return all
		}
	}
	all := v.admitsAllHere(folder, sc)
	if v.part != nil && v.part.rec != nil {
		v.part.mu.Lock()
		v.part.rec.AdmitsAll[key] = all
		v.part.mu.Unlock()
	}
	return all
}

// admitsAllHere is admitsAll in this index alone.
func (v view) admitsAllHere(folder string, sc *Scope) bool {
	if sc == nil {
		sc = &Scope{Subtree: folder}
	}
	if sc.Subtree != "" {
		return false
	}
	d, err := v.idx.FieldDict(schema.Session)
	if err != nil {
		return false
	}
	defer d.Close()
	for {
		e, err := d.Next()
		if err != nil {
			return false
		}
		if e == nil {
			return true
		}
		if e.Term != schema.TreeSession && (sc.Session == "" || e.Term != sc.Session) {
			return false
		}
	}
}

// scopeQuery admits the documents a search covers: the tree below folder, or what a
// Scope says; session documents only by their session.
func scopeQuery(folder string, sc *Scope) bq.Query {
	if sc == nil {
		sc = &Scope{Subtree: folder}
	}
	var tree bq.Query = term(schema.Session, schema.TreeSession, 0)
	if sc.Subtree != "" {
		where := []bq.Query{term(schema.Folders, sc.Subtree, 0)}
		for _, d := range sc.DirectIn {
			where = append(where, term(schema.Dir, schema.DirKey(d), 0))
		}
		tree = bq.NewConjunctionQuery([]bq.Query{tree, bq.NewDisjunctionQuery(where)})
	}
	if sc.Session == "" {
		return tree
	}
	return bq.NewDisjunctionQuery([]bq.Query{tree, term(schema.Session, sc.Session, 0)})
}

func scopeKey(sc *Scope) string {
	if sc == nil {
		return ""
	}
	return "\x00" + sc.Session + "\x00" + sc.Subtree + "\x00" + strings.Join(sc.DirectIn, "\x00")
}
