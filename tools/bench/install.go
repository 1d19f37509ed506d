package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ensureRipgrep installs ripgrep from Debian's packages when it is missing.
func ensureRipgrep(logf func(string, ...any)) bool {
	if _, err := exec.LookPath("rg"); err == nil {
		return true
	}
	logf("ripgrep missing; apt-get install -y ripgrep")
	cmd := exec.Command("apt-get", "install", "-y", "ripgrep")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		logf("apt-get failed: %v: %s", err, lastLines(string(out), 3))
		return false
	}
	_, err := exec.LookPath("rg")
	return err == nil
}

// FSServerVersion is the version of the reference filesystem MCP server the harness
// installs, pinned so that runs compare.
const FSServerVersion = "2026.8.31"

// ensureFSServer installs the reference filesystem MCP server under dir/node_modules
// when missing, and returns its entry script, or a note saying why it cannot run.
func ensureFSServer(dir string, logf func(string, ...any)) (script, note string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err.Error()
	}
	script = filepath.Join(abs, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := exec.LookPath("node"); err != nil {
		return "", "node is not installed: the reference filesystem MCP server was not measured"
	}
	if _, err := os.Stat(script); err == nil {
		return script, ""
	}
	logf("installing @modelcontextprotocol/server-filesystem@%s under %s with npm", FSServerVersion, dir)
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", abs,
		"@modelcontextprotocol/server-filesystem@"+FSServerVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("npm install @modelcontextprotocol/server-filesystem@%s failed (%v): the reference filesystem MCP server was not measured; %s",
			FSServerVersion, err, lastLines(string(out), 2))
	}
	if _, err := os.Stat(script); err != nil {
		return "", "the reference filesystem MCP server installed without " + script + ": not measured"
	}
	return script, ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
