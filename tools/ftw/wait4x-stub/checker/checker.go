// Package checker is a minimal stand-in for wait4x's checker package.
// go-ftw v2.5.0 imports wait4x only for its optional --wait-for-host flag,
// and the Go module proxy here refuses wait4x.dev, so tools/ftw/go.mod
// replaces it by this local module that offers just what go-ftw calls.
package checker

import "context"

// Checker tells whether a target is ready; an error means "not yet".
type Checker interface {
	Identity() (string, error)
	Check(ctx context.Context) error
}
