// Command crs-export writes the OWASP CRS v4 rules and regression tests that
// the Go module github.com/corazawaf/coraza-coreruleset/v4 embeds into a
// directory laid out like ../shared/crs/vX.Y.Z, for machines where neither
// BULWARK_CRS_DIR nor ../shared/crs is there (tools/crs/crsdata.py runs it).
// The module's version is pinned by go.mod and its content by go.sum.
//
//	crs-export DIR    writes DIR/vX.Y.Z/{rules/, crs-setup.conf.example,
//	                  tests/regression/tests/} and prints that directory
//
// The module's rule files are CRS's with their comment lines removed; the
// tests are CRS's tests/regression/tests as released. The result is data of
// the CRS project (Apache License 2.0): it is written under .tools, never
// into the repository.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	crsrules "github.com/corazawaf/coraza-coreruleset/v4"
	crstests "github.com/corazawaf/coraza-coreruleset/v4/tests"
)

const modulePath = "github.com/corazawaf/coraza-coreruleset/v4"

// stamp names the file that marks a complete export; a directory without it
// is left over from an interrupted run and is written again.
const stamp = ".bulwark-export"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: crs-export DIR")
		os.Exit(2)
	}
	dir, err := export(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "crs-export:", err)
		os.Exit(1)
	}
	fmt.Println(dir)
}

// moduleVersion is the version of the embedded CRS module this binary was
// built with ("v4.25.0"), which is also the CRS release it carries.
func moduleVersion() (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("no build information in the binary")
	}
	for _, dep := range info.Deps {
		if dep.Path == modulePath {
			if dep.Replace != nil {
				return dep.Replace.Version, nil
			}
			return dep.Version, nil
		}
	}
	return "", fmt.Errorf("%s is not a dependency of this binary", modulePath)
}

func export(root string) (string, error) {
	version, err := moduleVersion()
	if err != nil {
		return "", err
	}
	final := filepath.Join(root, version)
	if _, err := os.Stat(filepath.Join(final, stamp)); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, "."+version+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)

	// The rules FS holds "@owasp_crs/<file>" and "@crs-setup.conf.example".
	rules, err := copyTree(crsrules.FS, "@owasp_crs", filepath.Join(tmp, "rules"))
	if err != nil {
		return "", err
	}
	setup, err := fs.ReadFile(crsrules.FS, "@crs-setup.conf.example")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "crs-setup.conf.example"), setup, 0o644); err != nil {
		return "", err
	}
	tests, err := copyTree(crstests.FS, ".", filepath.Join(tmp, "tests", "regression", "tests"))
	if err != nil {
		return "", err
	}
	if rules < 20 || tests < 100 {
		return "", fmt.Errorf("%s %s: only %d rule files and %d test files", modulePath, version, rules, tests)
	}
	note := fmt.Sprintf("%s %s: %d rule and data files, %d test files\n", modulePath, version, rules, tests)
	if err := os.WriteFile(filepath.Join(tmp, stamp), []byte(note), 0o644); err != nil {
		return "", err
	}
	if err := os.RemoveAll(final); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	return final, nil
}

// copyTree writes every regular file below from (in fsys) under to, keeping
// the relative paths; returns how many files it wrote.
func copyTree(fsys fs.FS, from, to string) (int, error) {
	n := 0
	err := fs.WalkDir(fsys, from, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(path, from), "/")
		if from == "." {
			rel = path
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		n++
		return os.WriteFile(dst, data, 0o644)
	})
	return n, err
}
