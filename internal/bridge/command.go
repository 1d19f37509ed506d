package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/guide/guide/internal/datadir"
	"github.com/guide/guide/internal/lineio"
	"github.com/guide/guide/internal/owner"
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
	// Roots: the client named no folder, and the bridge serves its roots (see Front),
	// answering the handshake with Handshake (passed to the bridge binary in $HandshakeEnv).
	Roots     bool
	Project   string // with Roots, --project if given
	Handshake *Handshake
}

// serveOwner is the flag of guide-mcp that makes it the owner daemon a bridge starts.
const serveOwner = "--serve-owner"

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

// dataDirs gives each root served its data directory: --data and --project name the first
// root's (as with one root); every other root has the default one of its project or, with
// --data D, D.<project> beside it.
type dataDirs struct {
	c     Command
	mu    sync.Mutex
	first string // the root given --data and --project
}

func (d *dataDirs) of(root string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.first == "" {
		d.first = root
	}
	if root == d.first {
		return d.c.DataDir(root)
	}
	if d.c.Dir != "" {
		return d.c.Dir + "." + datadir.ProjectName(root)
	}
	return filepath.Join(datadir.DataHome(), datadir.ProjectName(root))
}

// Exec replaces this process with the bridge binary at path, running c. It returns only
// when that fails.
func (c Command) Exec(path string) error {
	env := os.Environ()
	if c.Roots {
		b, err := json.Marshal(c.Handshake)
		if err != nil {
			return err
		}
		env = append(env, HandshakeEnv+"="+string(b))
	}
	return syscall.Exec(path, append([]string{path}, c.Argv()...), env)
}

// ParseCommand reads what Exec passed: the arguments Argv wrote and, with --roots, the
// handshake in $HandshakeEnv, which it removes from the environment (it is not the owner
// daemon's).
func ParseCommand(args []string) (Command, error) {
	var c Command
	fs := flag.NewFlagSet(Binary, flag.ContinueOnError)
	fs.StringVar(&c.Dir, "data", "", "the project's data directory")
	fs.Int64Var(&c.MaxLine, "max-line", 0, "the largest message from the client, in bytes")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.Owner, "owner", "", "the program to start as the project's owner; its arguments follow --")
	fs.BoolVar(&c.Roots, "roots", false, "serve the client's roots, as guide-mcp with no --root")
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
	if c.Roots {
		c.Handshake = &Handshake{}
		if err := json.Unmarshal([]byte(os.Getenv(HandshakeEnv)), c.Handshake); err != nil {
			return c, fmt.Errorf("$%s: %w", HandshakeEnv, err)
		}
		os.Unsetenv(HandshakeEnv)
	}
	return c, nil
}

// Run serves a stdio client on in and out until it closes its end or ctx ends: through the
// owner of Dir or, with Roots, through the owners of the client's roots (see Front);
// either is started, as the program Owner, when none answers. guide-bridge runs it, and
// guide-mcp when no bridge binary is installed beside it.
func (c Command) Run(ctx context.Context, in io.Reader, out io.Writer, logger *slog.Logger) error {
	// One message is bounded as the owner bounds a request body: a longer one is answered
	// with a parse error, and never held whole in memory.
	in = lineio.LimitLines(in, c.MaxLine, func() {
		logger.Warn("refused a stdio message larger than --max-body", "max_bytes", c.MaxLine)
	})
	if !c.Roots {
		return c.bridge(c.Dir, nil, nil, in, out, logger).Run(ctx)
	}
	if c.Handshake == nil {
		return errors.New("serving the client's roots: no handshake to answer it with")
	}
	dirs := &dataDirs{c: c}
	f := &Front{In: in, Out: out, Logger: logger, Handshake: c.Handshake,
		Serve: func(ctx context.Context, root string, in io.Reader, out io.Writer) error {
			dir := dirs.of(root)
			var after []string // after the client's flags, which name the first root's
			if dir != c.DataDir(root) {
				after = []string{"--data", dir, "--project", datadir.ProjectName(root)}
			}
			return c.bridge(dir, []string{"--root", root}, after, in, out, logger.With("root", root)).Run(ctx)
		}}
	return f.Run(ctx)
}

// bridge is a bridge to the owner of dir, which starts that owner as the program Owner
// with the flag that makes it the daemon, then args, then Args, then after.
func (c Command) bridge(dir string, args, after []string, in io.Reader, out io.Writer, logger *slog.Logger) *Bridge {
	args = append(append(append([]string{serveOwner}, args...), c.Args...), after...)
	return &Bridge{Dir: dir, In: in, Out: out, Logger: logger,
		Start: func() error { return owner.StartDaemon(dir, c.Owner, args) }}
}
