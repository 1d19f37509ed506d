// Package query holds the semantics of the tools (view, tree, and the ones that follow)
// as plain functions over a read-only snapshot of the projections. It knows nothing of
// MCP: the MCP layer maps arguments in and results out.
package query

import "fmt"

// ErrorType classifies an error for the client. The list is the wire contract: add to it,
// never rename.
type ErrorType string

// Error types. The first block is the result contract every tool shares.
const (
	ErrNotFound       ErrorType = "not_found"
	ErrNoMatches      ErrorType = "no_matches"
	ErrInvalidPattern ErrorType = "invalid_pattern"
	ErrNoSession      ErrorType = "no_session"
	ErrIO             ErrorType = "io_error"
	ErrTemplate       ErrorType = "template_error"
	ErrUnknown        ErrorType = "unknown"

	ErrInvalidPath     ErrorType = "invalid_path"     // a path that is not a clean relative path inside the root
	ErrInvalidArgument ErrorType = "invalid_argument" // an argument out of its range
	ErrNotReady        ErrorType = "not_ready"        // the document has no readable content (yet)
	ErrTooLarge        ErrorType = "too_large"        // a session document or a session over its size limits
)

// instructions tell an agent what to do with each type of error; the wording of the first
// four is what clients of the content tools already expect.
var instructions = map[ErrorType]string{
	ErrNotFound:        "Present this error to the user and take no further action.",
	ErrNoMatches:       "Present this error to the user so they can correct the pattern. Do NOT attempt corrective action.",
	ErrInvalidPattern:  "Present this error to the user with pattern syntax help.",
	ErrNoSession:       "Inform user that project context is required.",
	ErrIO:              "Present this error to the user; retrying later may succeed.",
	ErrTemplate:        "Present this error to the user so they can fix the template.",
	ErrUnknown:         "Present this error to the user and take no further action.",
	ErrInvalidPath:     "Use a path relative to the project root, without '..', as shown by tree or view(\"\").",
	ErrInvalidArgument: "Correct the argument as the error says and call the tool again.",
	ErrNotReady:        "Tell the user this document cannot be shown as text, and why.",
	ErrTooLarge:        "Tell the user the limit and how far over it the document is.",
}

// Error is an error a client sees: a type, a message for the user, and an instruction
// for the agent. An internal failure (see Internal) also carries its cause, which is for
// the operator's log and never crosses the wire.
type Error struct {
	Type        ErrorType `json:"error_type"`
	Message     string    `json:"error"`
	Instruction string    `json:"instruction"`
	Cause       error     `json:"-"`
}

func (e *Error) Error() string { return string(e.Type) + ": " + e.Message }

// Unwrap returns the cause of an internal failure, nil for an error of the request.
func (e *Error) Unwrap() error { return e.Cause }

// Errorf builds an Error of type t with the standard instruction.
func Errorf(t ErrorType, format string, args ...any) *Error {
	return &Error{Type: t, Message: fmt.Sprintf(format, args...), Instruction: instructions[t]}
}

// Internal reports a failure of the server rather than of the request: the client reads
// what failed and "internal error" under type t; the cause, whose text may name files,
// hosts or internals, is kept for the operator's log.
func Internal(t ErrorType, cause error, format string, args ...any) *Error {
	return &Error{Type: t, Message: fmt.Sprintf(format, args...) + ": internal error", Instruction: instructions[t], Cause: cause}
}

// WithInstruction replaces the standard instruction, where a tool knows better.
func (e *Error) WithInstruction(s string) *Error {
	e.Instruction = s
	return e
}

// Instruction returns the standard instruction for an error type.
func Instruction(t ErrorType) string { return instructions[t] }
