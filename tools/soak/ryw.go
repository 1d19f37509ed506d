package soak

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guide/guide/internal/testkit/oracle"
)

// rywFolder is where the read-your-writes writer keeps its documents: a folder of the
// root the file-system operations never pick, since their tree never held it.
const rywFolder = "soak-ryw"

// rywStats is what the read-your-writes writer found.
type rywStats struct {
	Trials  int
	Stale   []string // trials whose answers missed the change and did not say so
	Partial int      // answers that said they were partial
	Errors  int      // trials cut short by a transport error (the all-in-one process killed)
}

// readYourWrites changes the writer's folder and checks each change at once through the
// all-in-one process (guide-mcp --root, which watches the root itself), until ctx ends:
// under the same churn and kills as the rest, no answer may miss a change saved before
// the call without saying it is partial. When the process is killed it reconnects.
func readYourWrites(ctx context.Context, url, root string, seed uint64, ops *opLog) rywStats {
	var st rywStats
	w := &oracle.Writer{Root: root, Folder: rywFolder, Rand: rand.New(rand.NewPCG(seed, 0x7e3))}
	var c *client.Client
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	for ctx.Err() == nil {
		if c == nil {
			var err error
			if c, err = Connect(ctx, url, "soak-ryw"); err != nil {
				c = nil
				sleep(ctx, 200*time.Millisecond)
				continue
			}
		}
		out, err := w.Trial(ctx, c)
		if ctx.Err() != nil {
			break
		}
		st.Trials++
		st.Partial += out.Partial
		switch {
		case err != nil:
			st.Errors++
			_ = c.Close()
			c = nil
		case out.Stale != "":
			st.Stale = append(st.Stale, out.Stale)
			ops.printf("read-your-writes: stale answer (%s): %s", out.Op, out.Stale)
		}
	}
	return st
}
