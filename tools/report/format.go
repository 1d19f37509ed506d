package report

import (
	"fmt"
	"math"
	"time"
)

// FormatDuration writes a duration with the precision the tables use; 0 is a dash.
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "—"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// FormatMB writes a size in megabytes (10^6 bytes).
func FormatMB(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

func fmtMiB(b int64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

func errText(s string) string {
	if s == "" {
		return ""
	}
	return "error: " + s
}

// NoteSuffix appends a note to another, after "; "; an empty note adds nothing.
func NoteSuffix(s string) string {
	if s == "" {
		return ""
	}
	return "; " + s
}

// seconds is a value in seconds as a duration, rounded to the nanosecond.
func seconds(v float64) time.Duration { return time.Duration(math.Round(v * 1e9)) }
