package ignore

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// repo is where git keeps what applies to a tree: the top of its work tree, and the
// repository's own folder (shared by its worktrees).
type repo struct {
	top    string // the work tree's top folder; the root itself when it is in no repository
	common string // the repository folder holding info/exclude and config; "" for none
	gitdir string // the work tree's own repository folder (a worktree's, under common); "" for none
}

// GitDir returns the repository folder of the work tree that holds root (its .git folder,
// or the folder a .git file names, for a worktree or a submodule), or "" when root is in
// no repository: git never lists what is in it.
func GitDir(root string) string { return findRepo(root).gitdir }

// findRepo finds the repository whose work tree holds root, as git does: the nearest
// folder at or above root with a .git folder, or a .git file naming the repository (a
// worktree or a submodule).
func findRepo(root string) repo {
	for dir := root; ; {
		dotgit := filepath.Join(dir, ".git")
		if st, err := os.Stat(dotgit); err == nil {
			gitdir := ""
			if st.IsDir() {
				gitdir = dotgit
			} else if b, err := os.ReadFile(dotgit); err == nil {
				if d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
					gitdir = resolve(dir, strings.TrimSpace(d))
				}
			}
			if gitdir != "" {
				common := gitdir
				if b, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
					common = resolve(gitdir, strings.TrimSpace(string(b)))
				}
				return repo{top: dir, common: common, gitdir: gitdir}
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return repo{top: root}
		}
		dir = parent
	}
}

func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// between lists the folders from the top of the work tree down to root's parent.
func (r repo) between(root string) []string {
	rel, err := filepath.Rel(r.top, root)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil
	}
	dirs := []string{r.top}
	parts := strings.Split(rel, string(filepath.Separator))
	for i := range len(parts) - 1 {
		dirs = append(dirs, filepath.Join(dirs[i], parts[i]))
	}
	return dirs
}

// infoExclude is the repository's own exclude file.
func (r repo) infoExclude() string {
	if r.common == "" {
		return ""
	}
	return filepath.Join(r.common, "info", "exclude")
}

// excludesFile is the user's global excludes file, found as git finds it: core.excludesFile
// from the system, global and repository configuration (the last one set wins), else
// $XDG_CONFIG_HOME/git/ignore, else ~/.config/git/ignore.
func (r repo) excludesFile(env func(string) string) string {
	home := env("HOME")
	xdg := env("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var files []string
	if v := env("GIT_CONFIG_NOSYSTEM"); v == "" || v == "0" || strings.EqualFold(v, "false") {
		system := env("GIT_CONFIG_SYSTEM")
		if system == "" {
			system = "/etc/gitconfig"
		}
		files = append(files, system)
	}
	if g := env("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	if r.common != "" {
		files = append(files, filepath.Join(r.common, "config"))
	}
	value := ""
	for _, f := range files {
		if v, ok := configValue(f, "core", "excludesfile"); ok {
			value = v
		}
	}
	switch {
	case value == "":
		if xdg == "" {
			return ""
		}
		return filepath.Join(xdg, "git", "ignore")
	case value == "~" || strings.HasPrefix(value, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, value[1:])
	case filepath.IsAbs(value):
		return value
	default:
		return filepath.Join(r.top, value)
	}
}

// configValue reads the last value of section.key (both lower case) in a git
// configuration file. It reads the syntax git writes and people type: [section] headers,
// key = value lines, comments, quoted values with escapes; not include directives.
func configValue(file, section, key string) (string, bool) {
	f, err := os.Open(file)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var value string
	found, in := false, false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				in = false
				continue
			}
			name := strings.TrimSpace(line[1:end])
			if i := strings.IndexAny(name, " \t\""); i >= 0 {
				name = "" // a subsection: not [core]
			}
			in = strings.EqualFold(name, section)
			line = strings.TrimSpace(line[end+1:]) // "[core] excludesFile = x" is valid
			if line == "" {
				continue
			}
		}
		if !in {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), key) {
			continue
		}
		value, found = configString(v), true
	}
	return value, found
}

// configString unquotes a configuration value and drops a trailing comment.
func configString(v string) string {
	var b strings.Builder
	quoted := false
	v = strings.TrimSpace(v)
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimRight(b.String(), " \t")
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimRight(b.String(), " \t")
}
