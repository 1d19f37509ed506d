package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guide/guide/internal/testkit"
)

// TestConfig: guide.yaml travels as a config event; every query process follows it.
func TestConfig(t *testing.T) {
	t.Run("ChangeReachesQueryProcess", func(t *testing.T) {
		p, root := contentPipeline(t)
		f := testkit.DecodeFailure(t, p.Call("get_content", map[string]any{"category_or_collection": "notes"}))
		testkit.Equal(t, f.ErrorType, "not_found", "before")
		testkit.WriteFile(t, root, "guide.yaml", disk(t, root, "guide.yaml")+"  notes:\n    categories: [notes]\n")
		testkit.WriteFile(t, root, "guide.yaml", strings.Replace(disk(t, root, "guide.yaml"), "categories:\n", "categories:\n  notes:\n    dir: notes\n", 1))
		sum := p.Reconcile()
		testkit.Equal(t, sum.Config, "published", "config")
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "notes"}))
		testkit.Equal(t, s.Value, disk(t, root, "notes/todo.md"), "after, without a restart")

		// A reformatted file publishes nothing.
		testkit.WriteFile(t, root, "guide.yaml", "# comment\n"+disk(t, root, "guide.yaml"))
		testkit.Equal(t, p.Reconcile().Config, "unchanged", "reformatted")
	})
	t.Run("BrokenKeepsLastGood", func(t *testing.T) {
		p, root := contentPipeline(t)
		testkit.WriteFile(t, root, "guide.yaml", "categories:\n  lang:\n    dir: lang\n    patterns: [\"[oops\"]\n")
		sum := p.Reconcile()
		testkit.Equal(t, sum.Config, "invalid", "config")
		if !strings.HasPrefix(sum.ConfigError, "guide.yaml:4: ") || !strings.Contains(sum.ConfigError, "[oops") {
			t.Errorf("config error %q should name file, line and problem", sum.ConfigError)
		}
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "dev"}))
		if !strings.Contains(s.Value, "guide://category/guidelines/intro.md") {
			t.Error("the last good configuration is not in force")
		}
	})
	t.Run("DefaultWithoutFile", func(t *testing.T) {
		p, root := contentPipeline(t)
		testkit.NoErr(t, os.Remove(filepath.Join(root, "guide.yaml")), "remove guide.yaml")
		testkit.Equal(t, p.Reconcile().Config, "default", "config")
		// Each top-level folder is a category with everything below it; "all" holds them.
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "lang", "pattern": "**/*.rs"}))
		testkit.Equal(t, s.Value, disk(t, root, "lang/examples/main.rs"), "lang has every file below it")
		s = success(t, p.Call("get_content", map[string]any{"category_or_collection": "all", "pattern": "todo"}))
		testkit.Equal(t, s.Value, disk(t, root, "notes/todo.md"), "all")
		f := testkit.DecodeFailure(t, p.Call("get_content", map[string]any{"category_or_collection": "dev"}))
		testkit.Equal(t, f.ErrorType, "not_found", "the file's collections are gone")
	})
	t.Run("SurvivesRestart", func(t *testing.T) {
		p, _ := contentPipeline(t)
		p.Stop()
		p.Start()
		s := success(t, p.Call("get_content", map[string]any{"category_or_collection": "dev", "pattern": "go"}))
		testkit.Equal(t, s.Value, "# Go\n\nRun gofmt.\n", "config from the catalog's state after a restart")
	})
}
