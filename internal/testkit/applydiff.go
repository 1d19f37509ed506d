package testkit

import (
	"fmt"
	"strings"
)

// ApplyDiff applies a unified diff to a, as patch would, and fails on any line that does
// not match: the check that a diff is exact, written apart from the code that writes one.
func ApplyDiff(a, d string) (string, error) {
	if d == "" {
		return a, nil
	}
	old := splitLines(a)
	lines := strings.SplitAfter(d, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("no headers")
	}
	var out []string
	pos := 0 // next line of old not yet copied
	i := 2
	for i < len(lines) && lines[i] != "" {
		var as, ac, bs, bc int
		if _, err := fmt.Sscanf(lines[i], "@@ -%d,%d +%d,%d @@\n", &as, &ac, &bs, &bc); err != nil {
			return "", fmt.Errorf("hunk header %q: %v", lines[i], err)
		}
		i++
		start := as - 1
		if ac == 0 {
			start = as
		}
		if start < pos || start > len(old) {
			return "", fmt.Errorf("hunk at %d out of order", as)
		}
		out = append(out, old[pos:start]...)
		pos = start
		gotA, gotB := 0, 0
		for gotA < ac || gotB < bc {
			if i >= len(lines) || lines[i] == "" {
				return "", fmt.Errorf("hunk ends early")
			}
			l := lines[i]
			i++
			text := l[1:]
			if i < len(lines) && strings.HasPrefix(lines[i], "\\ ") {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(old) || old[pos] != text {
					return "", fmt.Errorf("line %d: want %q, have %q", pos+1, text, old[min(pos, len(old)-1)])
				}
				if l[0] == ' ' {
					out = append(out, text)
					gotB++
				}
				pos++
				gotA++
			case '+':
				out = append(out, text)
				gotB++
			default:
				return "", fmt.Errorf("line %q", l)
			}
		}
		if gotA != ac || gotB != bc {
			return "", fmt.Errorf("hunk counts %d,%d: read %d,%d", ac, bc, gotA, gotB)
		}
	}
	out = append(out, old[pos:]...)
	return strings.Join(out, ""), nil
}

// splitLines splits s into lines, each with its "\n" but a last one without.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}
