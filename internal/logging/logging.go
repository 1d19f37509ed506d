// Package logging builds the structured logger every binary writes to stderr.
package logging

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// New returns a structured logger on stderr at the named level.
func New(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
