package query

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"
)

// MaxPathLen bounds a path argument.
const MaxPathLen = 4096

// CleanPath checks a path argument and returns it in the catalog's form: relative to the
// project root, slash-separated, without "." segments, empty slashes or a trailing slash.
// "" is the root. Anything that could name a place outside the root is refused.
func CleanPath(p string) (string, *Error) {
	if len(p) > MaxPathLen {
		return "", Errorf(ErrInvalidPath, "path is %d bytes long; the limit is %d", len(p), MaxPathLen)
	}
	if !utf8.ValidString(p) {
		return "", Errorf(ErrInvalidPath, "path is not valid UTF-8")
	}
	if strings.ContainsRune(p, utf8.RuneError) {
		// JSON carries no invalid UTF-8: a decoder puts U+FFFD where such bytes were. No
		// document has it in its name (see the indexer), so the path was not valid UTF-8.
		return "", Errorf(ErrInvalidPath, "path %q holds U+FFFD, which stands for bytes that are not valid UTF-8; no document has such a name", p)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", Errorf(ErrInvalidPath, "path %q contains a NUL byte", p)
	}
	if absolute(p) {
		return "", errAbsolute(p)
	}
	if traverses(p) {
		c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
		if c == ".." || strings.HasPrefix(c, "../") {
			return "", Errorf(ErrInvalidPath, "%q leaves the project root", p)
		}
		if c == "." {
			c = ""
		}
		return "", Errorf(ErrInvalidPath, "%q goes up a folder with \"..\", which paths may not do; it means %q", p, c).
			WithInstruction(fmt.Sprintf("Use %q: a path relative to the project root, without '..'.", c))
	}
	if strings.Contains(p, "%") {
		if u, err := url.PathUnescape(p); err == nil && u != p && (traverses(u) || strings.IndexByte(u, 0) >= 0 || strings.HasPrefix(u, "/")) {
			return "", Errorf(ErrInvalidPath, "%q is an encoded path that leaves the project root", p)
		}
	}
	segs := strings.Split(p, "/")
	out := segs[:0]
	for _, s := range segs {
		if s == "" || s == "." {
			continue
		}
		out = append(out, s)
	}
	clean := strings.Join(out, "/")
	if absolute(clean) {
		// "./C:/x" or "./\\server": absolute once the "." is dropped.
		return "", errAbsolute(p)
	}
	return clean, nil
}

// absolute reports a path that names a place outside the project root by itself: from
// the file system's root, a Windows drive or share, or the home folder.
func absolute(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || hasDrive(p) || p == "~" || strings.HasPrefix(p, "~/")
}

func errAbsolute(p string) *Error {
	return Errorf(ErrInvalidPath, "%q is an absolute path; paths are relative to the project root (\"\" is the root)", p)
}

// traverses reports a ".." segment, with either slash as the separator.
func traverses(p string) bool {
	for s := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if s == ".." {
			return true
		}
	}
	return false
}

func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z') &&
		(len(p) == 2 || p[2] == '/' || p[2] == '\\')
}
