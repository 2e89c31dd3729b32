package spec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxGlobMatches caps the paths one glob may name: a pattern such as
// */*/*/*/x.yaml over a big tree is a mistake, not a spec layout.
const MaxGlobMatches = 10_000

// projectRoot is the directory every file loaded from one argument must stay
// inside: the argument's directory (a file's, a glob's fixed part, or the
// directory itself), or LoadOptions.Root. Files are read through an os.Root,
// so that no symlink and no ".." can lead a read outside it.
type projectRoot struct {
	dir  string // as the user wrote it: shown in diagnostics
	abs  string // absolute, symlinks not resolved: what arguments are relative to
	real string // absolute, symlinks resolved: what a file's real path must be under
	root *os.Root
}

// errOutside is a path that leads out of its project root.
var errOutside = errors.New("outside the project root")

// openRoot returns the project root for dir, opening it once per load.
func (l *loader) openRoot(dir string) (*projectRoot, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if r, ok := l.roots[abs]; ok {
		return r, nil
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, errors.Unwrap(err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	r := &projectRoot{dir: dir, abs: abs, real: real, root: root}
	if l.roots == nil {
		l.roots = map[string]*projectRoot{}
	}
	l.roots[abs] = r
	return r, nil
}

func (l *loader) closeRoots() {
	for _, r := range l.roots {
		r.root.Close()
	}
}

// rel returns path relative to the root, or errOutside.
func (r *projectRoot) rel(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(r.abs, abs)
	if err != nil || climbsOut(rel) {
		return "", errOutside
	}
	return rel, nil
}

// climbsOut reports whether a clean relative path climbs out with "..".
func climbsOut(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel)
}

// resolve returns the real path of rel (symlinks resolved), which is how a
// file reached twice is recognised, or errOutside if it is not in the root.
func (r *projectRoot) resolve(rel string) (string, error) {
	path := filepath.Join(r.abs, rel)
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return path, nil // missing or unreadable: opening it says so
	}
	if in, err := filepath.Rel(r.real, real); err != nil || climbsOut(in) {
		return "", errOutside
	}
	return real, nil
}

// readCapped reads at most limit bytes (one more to tell that there was more)
// of a regular file inside the root. The file is opened without blocking and
// its mode checked before any read: a FIFO or a device named *.yaml would
// otherwise block orch forever, or feed it without end.
func readCapped(r *os.Root, rel string, limit int64) (data []byte, tooBig bool, err error) {
	fh, err := r.OpenFile(rel, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		if escapes(err) {
			return nil, false, errOutside
		}
		return nil, false, errors.Unwrap(err)
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, false, err
	}
	if !info.Mode().IsRegular() {
		return nil, false, fmt.Errorf("not a regular file (%s)", fileKind(info.Mode()))
	}
	data, err = io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return nil, true, nil
	}
	return data, false, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// globIn returns the paths inside the root that match pattern (relative to
// the root), sorted as filepath.Glob sorts them. A part "**" matches any
// number of directories, none included (doublestar's meaning): "**/*.yaml"
// names the YAML files at the top and at every depth. A wildcard never leads
// through a symbolic link to a directory, "**" included: with ten links to
// "." a pattern of six stars would otherwise name a million paths, and a
// link loop would never end. Literal parts of the pattern may go through
// links (the root still keeps them inside).
func globIn(r *os.Root, pattern string) ([]string, error) {
	paths := []string{"."}
	parts := strings.Split(filepath.ToSlash(pattern), "/")
	recursive := false
	for i, part := range parts {
		last := i == len(parts)-1
		if _, err := filepath.Match(part, ""); err != nil {
			return nil, err
		}
		var next []string
		var err error
		if part == "**" {
			recursive = true
			if next, err = descend(r, paths, last); err != nil {
				return nil, err
			}
			paths = next
			continue
		}
		for _, dir := range paths {
			if !hasMeta(part) {
				next = append(next, filepath.Join(dir, part))
				continue
			}
			entries, err := readDirIn(r, dir)
			if err != nil {
				continue // not a directory, or unreadable: it matches nothing
			}
			for _, e := range entries {
				if ok, _ := filepath.Match(part, e.Name()); ok && (last || e.IsDir()) {
					next = append(next, filepath.Join(dir, e.Name()))
				}
			}
			if len(next) > MaxGlobMatches {
				return nil, errTooMany
			}
		}
		paths = next
	}
	if recursive { // "a/**/**/b" reaches a/x/b more than once
		slices.Sort(paths)
		paths = slices.Compact(paths)
	}
	var out []string
	for _, p := range paths {
		if _, err := r.Lstat(p); err == nil || escapes(err) { // reading it will say it leads out
			out = append(out, p)
		}
	}
	return out, nil
}

var errTooMany = fmt.Errorf("it matches more than %d paths", MaxGlobMatches)

// descend returns each of dirs with every directory below it (depth first,
// in lexical order), not through links; with files, as the last part of a
// pattern, the files below them too.
func descend(r *os.Root, dirs []string, files bool) ([]string, error) {
	var out []string
	var walk func(dir string) error
	walk = func(dir string) error {
		out = append(out, dir)
		if len(out) > MaxGlobMatches {
			return errTooMany
		}
		entries, err := readDirIn(r, dir)
		if err != nil {
			return nil // not a directory, or unreadable: nothing below it
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir(): // a link to a directory is not: it is never entered
				if err := walk(path); err != nil {
					return err
				}
			case files:
				if out = append(out, path); len(out) > MaxGlobMatches {
					return errTooMany
				}
			}
		}
		return nil
	}
	for _, dir := range dirs {
		if err := walk(dir); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// escapes reports whether os.Root refused a path for leading outside it
// (through "..", a link that leads out, or any absolute link), an error it
// does not export.
func escapes(err error) bool { return strings.Contains(err.Error(), "path escapes from parent") }

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

func readDirIn(r *os.Root, dir string) ([]fs.DirEntry, error) {
	f, err := r.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// walkIn lists the *.yaml and *.yml files below dir (relative to the root) in
// lexical order, skipping hidden directories such as .git and .orch. Links
// are listed, not followed: reading one checks where it leads.
func walkIn(r *os.Root, dir string) ([]string, error) {
	var out []string
	err := fs.WalkDir(r.FS(), filepath.ToSlash(dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != filepath.ToSlash(dir) && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext == ".yaml" || ext == ".yml" {
			out = append(out, filepath.FromSlash(path))
		}
		return nil
	})
	return out, err
}
