package ignore

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Options says which rules Load puts in force besides the built-in defaults.
type Options struct {
	// Git honours the repository's rules as git does: the .gitignore of every folder
	// (and of the folders above the root, up to the top of the repository), the
	// repository's .git/info/exclude, and the user's global excludes file (git's
	// core.excludesFile, by default $XDG_CONFIG_HOME/git/ignore).
	Git bool
	// Extra holds further rules (the --ignore flags), above all others.
	Extra []string
	// Env looks up an environment variable; default os.Getenv. It finds the user's git
	// configuration: HOME, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM.
	Env func(string) string
}

// maxRuleFile bounds the ignore file read: rules, not content.
const maxRuleFile = 1 << 20

// Load returns the rules of the tree at root (an absolute path with its symbolic links
// resolved), in git's order of precedence, lowest first: the built-in defaults, the
// global excludes file, .git/info/exclude, every .gitignore from the top of the
// repository down to the path's own folder, then the root's .guideignore and Extra. The
// .gitignore files below the root are read when first needed; ask Load again for a
// Matcher that sees changes to them.
//
// A line of a git file that is not a valid pattern is skipped, as git skips it; one of
// .guideignore or Extra is an *Error.
func Load(root string, o Options) (*Matcher, error) {
	if o.Env == nil {
		o.Env = os.Getenv
	}
	m := &Matcher{}
	defaults, err := compileSource(DefaultSource())
	if err != nil {
		return nil, err
	}
	m.low = append(m.low, defaults)
	if o.Git {
		m.root, m.dirs = root, map[string]*ruleSet{}
		repo := findRepo(root)
		above := func(dir string) string {
			rel, err := filepath.Rel(dir, root)
			if err != nil || rel == "." {
				return ""
			}
			return filepath.ToSlash(rel)
		}
		for _, f := range []string{repo.excludesFile(o.Env), repo.infoExclude()} {
			if f == "" {
				continue
			}
			if text, ok := readRules(f); ok {
				s := Parse(f, text)
				s.Above, s.Lenient = above(repo.top), true
				set, _ := compileSource(s)
				m.low = append(m.low, set)
			}
		}
		// The .gitignore files of the folders above the root, from the top down.
		for _, dir := range repo.between(root) {
			f := filepath.Join(dir, GitFile)
			if text, ok := readRules(f); ok {
				s := Parse(f, text)
				s.Above, s.Lenient = above(dir), true
				set, _ := compileSource(s)
				m.low = append(m.low, set)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(root, File))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		set, err := compileSource(Parse(File, string(b)))
		if err != nil {
			return nil, err
		}
		m.high = append(m.high, set)
	}
	if len(o.Extra) > 0 {
		set, err := compileSource(Source{Name: "--ignore", Lines: o.Extra})
		if err != nil {
			return nil, err
		}
		m.high = append(m.high, set)
	}
	return m, nil
}

// folder returns the rules of the .gitignore in folder (depth levels below the root),
// reading it the first time; nil when there is none.
func (m *Matcher) folder(folder string, depth int) *ruleSet {
	m.mu.RLock()
	set, ok := m.dirs[folder]
	m.mu.RUnlock()
	if ok {
		return set
	}
	rel := GitFile
	if folder != "" {
		rel = folder + "/" + GitFile
	}
	if text, ok := readInRoot(m.root, rel); ok {
		s := Parse(rel, text)
		s.Dir, s.Lenient = folder, true
		set, _ = compileSource(s)
		set.depth = depth
		if len(set.rules) == 0 {
			set = nil
		}
	}
	m.mu.Lock()
	m.dirs[folder] = set
	m.mu.Unlock()
	return set
}

// readInRoot reads the rule file rel below root, never outside it; like git, it does not
// follow a rule file that is a symbolic link.
func readInRoot(root, rel string) (string, bool) {
	st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	f, err := os.OpenInRoot(root, filepath.FromSlash(rel))
	if err != nil {
		return "", false
	}
	defer f.Close()
	return readAll(f)
}

// readRules reads a rule file outside the tree: git's exclude files, the .gitignore of a
// folder above the root.
func readRules(name string) (string, bool) {
	st, err := os.Lstat(name)
	if err != nil || st.Mode()&fs.ModeSymlink != 0 && filepath.Base(name) == GitFile {
		return "", false
	}
	f, err := os.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	return readAll(f)
}

func readAll(f *os.File) (string, bool) {
	b, err := io.ReadAll(io.LimitReader(f, maxRuleFile))
	if err != nil {
		return "", false
	}
	return string(b), true
}
