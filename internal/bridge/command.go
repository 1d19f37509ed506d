package bridge

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/guide/guide/internal/datadir"
)

// Binary is the name of the small stdio bridge program, installed beside guide-mcp.
// It links this package and the standard library only, so that each client of a project
// costs a few megabytes, not the whole server's binary.
const Binary = "guide-bridge"

// Command is the command line guide-mcp gives the bridge binary it replaces itself
// with: what the bridge needs, and how to start an owner.
type Command struct {
	Dir      string   // the project's data directory; with Roots, --data if given
	MaxLine  int64    // the largest message from the client, in bytes
	LogLevel string   // debug, info, warn or error
	Owner    string   // the program a bridge starts as the owner daemon (guide-mcp)
	Args     []string // the owner's arguments
	// Roots: the client named no folder, and the bridge serves its first root (see Front),
	// answering the handshake with the Handshake in $HandshakeEnv.
	Roots   bool
	Project string // with Roots, --project if given
}

// HandshakeEnv is the environment variable in which guide-mcp gives the bridge binary the
// Handshake to answer with, in JSON, when the client named no folder.
const HandshakeEnv = "GUIDE_BRIDGE_HANDSHAKE"

// Argv returns the bridge's arguments (without the program name).
func (c Command) Argv() []string {
	argv := []string{"--data", c.Dir, "--max-line", strconv.FormatInt(c.MaxLine, 10),
		"--log-level", c.LogLevel, "--owner", c.Owner}
	if c.Roots {
		argv = append(argv, "--roots", "--project", c.Project)
	}
	return append(append(argv, "--"), c.Args...)
}

// DataDir is the data directory of the project at root, with Roots: --data if given, else
// the default one of the project named by --project or after root.
func (c Command) DataDir(root string) string {
	if c.Dir != "" {
		return c.Dir
	}
	project := c.Project
	if project == "" {
		project = datadir.ProjectName(root)
	}
	return filepath.Join(datadir.DataHome(), project)
}

// ParseCommand reads what Argv wrote.
func ParseCommand(args []string) (Command, error) {
	var c Command
	fs := flag.NewFlagSet(Binary, flag.ContinueOnError)
	fs.StringVar(&c.Dir, "data", "", "the project's data directory")
	fs.Int64Var(&c.MaxLine, "max-line", 0, "the largest message from the client, in bytes")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.Owner, "owner", "", "the program to start as the project's owner; its arguments follow --")
	fs.BoolVar(&c.Roots, "roots", false, "serve the client's first root, as guide-mcp with no --root")
	fs.StringVar(&c.Project, "project", "", "with --roots: the project's name, if guide-mcp was given one")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.Args = fs.Args()
	switch {
	case c.Dir == "" && !c.Roots || c.Owner == "":
		return c, errors.New("--data and --owner are required: guide-mcp --root DIR runs this program, with both")
	case c.MaxLine <= 0:
		return c, fmt.Errorf("--max-line %d: want a positive number of bytes", c.MaxLine)
	}
	return c, nil
}
