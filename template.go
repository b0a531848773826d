// Package rotdtemplate embeds .rotd-template/, the coordination tree that
// `coord init` lays down. It lives at the module root because go:embed
// cannot reach above a package's directory.
package rotdtemplate

import (
	"embed"
	"io/fs"
)

//go:embed all:.rotd-template
var files embed.FS

// Coordination is the template of .rotd/coordination.
func Coordination() fs.FS {
	sub, err := fs.Sub(files, ".rotd-template/coordination")
	if err != nil {
		panic(err)
	}
	return sub
}
