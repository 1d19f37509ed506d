package query

import (
	"bufio"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"
)

// FuzzMultipart: whatever the documents hold, the standard library parses the output and
// gives back every document byte for byte, under the declared boundary.
func FuzzMultipart(f *testing.F) {
	f.Add([]byte("# a\n"), []byte("b\r\n--guide-boundary\r\n"), []byte("--guide-boundary-1--"))
	f.Add([]byte(""), []byte("\r\n"), []byte("--guide-boundary--\r\n"))
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		parts := []Part{
			{ContentType: "text/markdown", Location: Location("x", "a.md"), Body: a},
			{ContentType: "text/plain", Location: Location("x y", "dir/b c.txt"), Body: b},
			{ContentType: "text/x-python", Location: Location("x", "c.py"), Body: c},
		}
		out := Multipart(parts)
		br := bufio.NewReader(strings.NewReader(out))
		h, err := textproto.NewReader(br).ReadMIMEHeader()
		if err != nil {
			t.Fatal(err)
		}
		_, params, err := mime.ParseMediaType(h.Get("Content-Type"))
		if err != nil {
			t.Fatal(err)
		}
		mr := multipart.NewReader(br, params["boundary"])
		for i, want := range parts {
			p, err := mr.NextPart()
			if err != nil {
				t.Fatalf("part %d: %v", i, err)
			}
			got, err := io.ReadAll(p)
			if err != nil {
				t.Fatalf("part %d: %v", i, err)
			}
			if string(got) != string(want.Body) {
				t.Fatalf("part %d: got %q, want %q", i, got, want.Body)
			}
			if p.Header.Get("Content-Location") != want.Location {
				t.Fatalf("part %d location %q", i, p.Header.Get("Content-Location"))
			}
		}
		if _, err := mr.NextPart(); err != io.EOF {
			t.Fatalf("after the last part: %v", err)
		}
	})
}

func TestContentType(t *testing.T) {
	for name, want := range map[string]string{"a.md": "text/markdown", "a.txt": "text/plain", "a.py": "text/x-python",
		"a": "text/plain", "a.JSON": "application/json", "a.weird-ext": "text/plain"} {
		if got := ContentType(name); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestLocation(t *testing.T) {
	if got := Location("my cat", "sub dir/idées #1.md"); got != "guide://category/my%20cat/sub%20dir/idées%20%231.md" {
		t.Errorf("Location = %q", got)
	}
}
