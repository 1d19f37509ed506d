package query

import (
	"bytes"
	"mime"
	"path"
	"strconv"
	"strings"
)

// Boundary is the multipart boundary of get_content's reply. Multipart picks another,
// "guide-boundary-N", only when a document contains "--guide-boundary".
const Boundary = "guide-boundary"

// multipartOverhead estimates the bytes of the header and the closing delimiter.
const multipartOverhead = 120

// partSize estimates a part's bytes in a multipart response.
func partSize(p Part) int {
	return len(p.Body) + len(p.Location) + len(p.ContentType) + 80
}

// Multipart formats documents as MIME multipart/mixed (RFC 2046) with CRLF line ends:
// a Content-Type header line declaring the boundary, then per part its Content-Type,
// Content-Location and Content-Length (in bytes) and its bytes unchanged. The CRLF before
// each delimiter belongs to the delimiter, so a part's body is exactly the document.
func Multipart(parts []Part) string {
	boundary := chooseBoundary(parts)
	var b strings.Builder
	n := multipartOverhead
	for _, p := range parts {
		n += partSize(p)
	}
	b.Grow(n)
	b.WriteString("Content-Type: multipart/mixed; boundary=\"" + boundary + "\"\r\n\r\n")
	for _, p := range parts {
		b.WriteString("--" + boundary + "\r\n")
		b.WriteString("Content-Type: " + p.ContentType + "\r\n")
		b.WriteString("Content-Location: " + p.Location + "\r\n")
		b.WriteString("Content-Length: " + strconv.Itoa(len(p.Body)) + "\r\n\r\n")
		b.Write(p.Body)
		b.WriteString("\r\n")
	}
	b.WriteString("--" + boundary + "--\r\n")
	return b.String()
}

// chooseBoundary returns Boundary, or the first "guide-boundary-N" whose delimiter occurs
// in no part.
func chooseBoundary(parts []Part) string {
	occurs := func(bd string) bool {
		d := []byte("--" + bd)
		for _, p := range parts {
			if bytes.Contains(p.Body, d) {
				return true
			}
		}
		return false
	}
	bd := Boundary
	for i := 1; occurs(bd); i++ {
		bd = Boundary + "-" + strconv.Itoa(i)
	}
	return bd
}

// contentTypes are the types of common text documents; others come from the system's table.
var contentTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".mdx": "text/markdown",
	".txt": "text/plain", ".text": "text/plain", ".rst": "text/x-rst", ".adoc": "text/asciidoc",
	".py": "text/x-python", ".go": "text/x-go", ".rs": "text/x-rust", ".js": "text/javascript",
	".ts": "text/x-typescript", ".java": "text/x-java", ".c": "text/x-c", ".h": "text/x-c",
	".sh": "text/x-shellscript", ".rb": "text/x-ruby", ".html": "text/html", ".htm": "text/html",
	".css": "text/css", ".csv": "text/csv", ".json": "application/json", ".yaml": "application/yaml",
	".yml": "application/yaml", ".toml": "application/toml", ".xml": "application/xml",
}

// ContentType is the MIME type of a document by its (base)name's extension: text/markdown
// for .md, text/plain when nothing is known.
func ContentType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := contentTypes[ext]; ok {
		return t
	}
	if ext != "" {
		if t := mime.TypeByExtension(ext); t != "" {
			if mt, _, err := mime.ParseMediaType(t); err == nil {
				return mt
			}
		}
	}
	return "text/plain"
}
